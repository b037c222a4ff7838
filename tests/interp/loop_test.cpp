// Loops: carried tensors (init -> param -> next -> result), live-outs, loop
// variables in expressions and indices, nesting.

#include "tests/interp/interp_test_util.h"

namespace tenet::ir::testing {
namespace {

constexpr ElemType F32 = ElemType::F32;

Dim over(const std::string& index, SizeExpr hi) {
  return Dim{index, 0, std::move(hi)};
}

TEST(InterpLoop, CarriedTensorsAndLiveOuts) {
  // for it in 0:3 { x = x * 2 + 1; t = x * 10 + it }   (t is a live-out)
  // c is carried unchanged (next == param).
  FunctionBuilder fb("iterate");
  SizeExpr N = sym("N");
  auto x0 = fb.input("x", F32, {N});
  fb.begin_loop("it", 3);
  auto x = fb.carry(x0, "x");
  auto c = fb.carry(x0, "c");
  auto next =
      fb.compute("x", {over("i", N)}, {}, ReduceOp::None,
                 make_binary(BinOp::Add, make_binary(BinOp::Mul, read(x, {"i"}), f32(2)), f32(1)));
  auto t = fb.compute("t", {over("i", N)}, {}, ReduceOp::None,
                      make_binary(BinOp::Add, make_binary(BinOp::Mul, read(next, {"i"}), f32(10)),
                                  make_cast(make_index("it"), F32)));
  auto after = fb.end_loop({next, c}, {t});
  ASSERT_EQ(after.size(), 3u);
  for (const auto& v : after) fb.output(v);
  Function f = fb.finish();

  auto out = interpret(f, {tensor_of(F32, {2}, {1, 2})});
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{15, 23}));    // 8x + 7
  EXPECT_EQ(values_of(out[1]), (std::vector<double>{1, 2}));      // unchanged
  EXPECT_EQ(values_of(out[2]), (std::vector<double>{152, 232}));  // last iteration, it = 2
}

TEST(InterpLoop, LoopVariableInAnIndex) {
  // for it in 0:3 { acc(i) = acc(i) + x(i + it) }  over x of size N + 2
  FunctionBuilder fb("window");
  SizeExpr N = sym("N");
  auto x = fb.input("x", F32, {N + 2});
  auto zero = fb.compute("zero", {over("i", N)}, {}, ReduceOp::None, f32(0));
  fb.begin_loop("it", 3);
  auto acc = fb.carry(zero, "acc");
  auto next = fb.compute(
      "acc", {over("i", N)}, {}, ReduceOp::None,
      make_binary(BinOp::Add, read(acc, {"i"}), make_read(x, {affine({{"i", 1}, {"it", 1}})})));
  fb.output(fb.end_loop({next}, {})[0]);
  Tensor y = interpret(fb.finish(), {tensor_of(F32, {5}, {1, 2, 4, 8, 16})})[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{7, 14, 28}));
}

TEST(InterpLoop, NestedLoopsAndReductionsInside) {
  // for a in 0:2 { for b in 0:3 { x = x + s } ; x = x * 2 }   with s() = sum(x) at entry
  FunctionBuilder fb("nested");
  SizeExpr N = sym("N");
  auto x0 = fb.input("x", F32, {N});
  fb.begin_loop("a", 2);
  auto xa = fb.carry(x0, "xa");
  auto s = fb.compute("s", {}, {over("i", N)}, ReduceOp::Sum, read(xa, {"i"}));
  fb.begin_loop("b", 3);
  auto xb = fb.carry(xa, "xb");
  auto xb_next = fb.compute("xb", {over("i", N)}, {}, ReduceOp::None,
                            make_binary(BinOp::Add, read(xb, {"i"}), make_read(s, {})));
  auto inner = fb.end_loop({xb_next}, {});
  auto xa_next = fb.compute("xa", {over("i", N)}, {}, ReduceOp::None,
                            make_binary(BinOp::Mul, read(inner[0], {"i"}), f32(2)));
  fb.output(fb.end_loop({xa_next}, {})[0]);
  Function f = fb.finish();

  std::vector<float> x = {1, 2};
  for (int a = 0; a < 2; ++a) {
    float s_ref = x[0] + x[1];
    for (int b = 0; b < 3; ++b)
      for (float& v : x) v += s_ref;
    for (float& v : x) v *= 2;
  }
  EXPECT_EQ(values_of(interpret(f, {tensor_of(F32, {2}, {1, 2})})[0]),
            (std::vector<double>{x[0], x[1]}));
}

}  // namespace
}  // namespace tenet::ir::testing
