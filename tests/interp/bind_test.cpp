// Binding inputs to a function (sizes, types, shapes) and the run-time errors
// of the interpreter; every message is pinned exactly.

#include "ir/bind.h"
#include "tests/interp/interp_test_util.h"

namespace tenet::ir::testing {
namespace {

constexpr ElemType F32 = ElemType::F32;

/// squash-like: w(D) and s(B, N, D); y(b, n, d) = s(b, n, d) * w(d)
Function two_inputs() {
  FunctionBuilder fb("f");
  SizeExpr B = sym("B"), N = sym("N"), D = sym("D");
  auto w = fb.input("w", F32, {D});
  auto s = fb.input("s", F32, {B, N, D});
  fb.output(fb.compute("y", {{"b", 0, B}, {"n", 0, N}, {"d", 0, D}}, {}, ReduceOp::None,
                       make_binary(BinOp::Mul, read(s, {"b", "n", "d"}), read(w, {"d"}))));
  return fb.finish();
}

/// One input x with the given shape; y(i) = 1 for i in 0:range_hi.
Function one_input(std::vector<SizeExpr> shape, SizeExpr range_hi,
                   std::vector<std::string> extra_params = {}) {
  FunctionBuilder fb("g");
  for (const auto& p : extra_params) fb.size_param(p);
  fb.input("x", F32, std::move(shape));
  fb.output(fb.compute("y", {{"i", 0, std::move(range_hi)}}, {}, ReduceOp::None, f32(1)));
  return fb.finish();
}

TEST(Bind, SolvesSizesFromShapes) {
  SizeBindings sizes = bind_sizes(two_inputs(), {Tensor(F32, {4}), Tensor(F32, {2, 3, 4})});
  EXPECT_EQ(sizes, (SizeBindings{{"B", 2}, {"D", 4}, {"N", 3}}));
  EXPECT_EQ(concrete_shape(*make_value(0, "v", F32, {sym("B") * 2, 5}), sizes),
            (std::vector<int64_t>{4, 5}));
}

TEST(Bind, InputCountTypeAndShapeErrors) {
  Function f = two_inputs();
  Tensor w(F32, {4});
  auto error = [&](std::vector<Tensor> inputs, SizeBindings given = {}) {
    return bind_error_of([&] { bind_sizes(f, inputs, given); });
  };
  EXPECT_EQ(error({w, Tensor(F32, {2, 3, 4}), w}), "'f' takes 2 inputs, 3 given");
  EXPECT_EQ(bind_error_of([] { bind_sizes(one_input({3}, 3), {}); }), "'g' takes 1 input, 0 given");
  EXPECT_EQ(error({w, Tensor(F32, {2, 3, 5})}),
            "input 's': expected float32[B, N, D] = [2, 3, 4], got float32[2, 3, 5]");
  EXPECT_EQ(error({w, Tensor(ElemType::F64, {2, 3, 4})}),
            "input 's': expected float32[B, N, D] = [2, 3, 4], got float64[2, 3, 4]");
  EXPECT_EQ(error({w, Tensor(F32, {2, 3})}),
            "input 's': expected float32[B, N, D], got float32[2, 3]");
  EXPECT_EQ(error({w, Tensor(F32, {2, 3, 4})}, {{"B", 5}}),
            "input 's': expected float32[B, N, D] = [5, 3, 4], got float32[2, 3, 4]");
  EXPECT_EQ(error({w, w}, {{"Q", 1}}),
            "'f' has no size parameter 'Q' (its size parameters are D, B, N)");
  EXPECT_EQ(error({w, w}, {{"N", -1}}), "size parameter 'N' cannot be negative (given N = -1)");

  Function g = one_input({3, sym("K")}, 3);
  EXPECT_EQ(bind_error_of([&] {
              bind_sizes(g, {Tensor(F32, {4, 2})});
            }),
            "input 'x': expected float32[3, K] = [3, 2], got float32[4, 2]");
  Function h = one_input({3, 2}, 3);
  EXPECT_EQ(bind_error_of([&] {
              bind_sizes(h, {Tensor(F32, {3, 1})});
            }),
            "input 'x': expected float32[3, 2], got float32[3, 1]");
}

TEST(Bind, SizesOnlyInRangesMustBeGiven) {
  Function f = one_input({sym("N")}, sym("M"), {"M"});
  EXPECT_EQ(bind_error_of([&] { interpret(f, {Tensor(F32, {2})}); }),
            "size parameter 'M' is not bound; give it with --sizes M=...");
  Tensor y = interpret(f, {Tensor(F32, {2})}, {{"M", 3}})[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{1, 1, 1}));
}

TEST(Bind, NegativeRanges) {
  Function f = one_input({sym("H")}, sym("H") - 9);
  EXPECT_EQ(bind_error_of([&] { bind_sizes(f, {Tensor(F32, {7})}); }),
            "index 'i' of the statement defining 'y' has an empty range [0, -2) for H = 7");
  EXPECT_EQ(bind_sizes(f, {Tensor(F32, {9})}).at("H"), 9);  // an empty range is fine

  FunctionBuilder fb("r");
  auto x = fb.input("x", F32, {sym("H")});
  fb.output(fb.compute("y", {}, {{"k", 2, sym("H")}}, ReduceOp::Sum, read(x, {"k"})));
  Function r = fb.finish();
  EXPECT_EQ(bind_error_of([&] { interpret(r, {Tensor(F32, {1})}); }),
            "index 'k' of the statement defining 'y' has an empty range [2, 1) for H = 1");
}

TEST(Bind, SizesWhoseProductsOverflow) {
  // A tensor whose byte size does not fit in 64 bits, from its shape alone.
  const int64_t big = int64_t(1) << 62;
  Function f = one_input({sym("N")}, 1);
  EXPECT_EQ(bind_error_of([&] {
              check_sizes(f, {{"N", big}});
            }),
            "tensor 'x' of shape (4611686018427387904,): 4611686018427387904 elements of 4 bytes "
            "overflow a 64-bit byte size");
  // A size expression that overflows while it is evaluated.
  Function product = one_input({sym("N") * sym("M")}, 1, {"M"});
  EXPECT_EQ(bind_error_of([&] {
              check_sizes(product, {{"N", int64_t(1) << 32}, {"M", int64_t(1) << 32}});
            }),
            "size expression 'M*N' overflows a 64-bit integer for M = 4294967296, N = 4294967296");
  // An output (y, of M floats) that only a range sizes.
  Function two = one_input({2}, sym("M"), {"M"});
  EXPECT_EQ(bind_error_of([&] {
              check_sizes(two, {{"M", big}});
            }),
            "tensor 'y' of shape (4611686018427387904,): 4611686018427387904 elements of 4 bytes "
            "overflow a 64-bit byte size");
  EXPECT_NO_THROW(check_sizes(two, {{"M", big / 4}}));  // 2^60 floats: representable
  // A reduction range longer than int64 counts.
  FunctionBuilder fb("r");
  fb.size_param("N");
  fb.output(fb.compute("y", {}, {{"k", SizeExpr(0) - sym("N"), sym("N")}}, ReduceOp::Sum, f32(1)));
  Function r = fb.finish();
  EXPECT_EQ(bind_error_of([&] {
              check_sizes(r, {{"N", big}});
            }),
            "index 'k' of the statement defining 'y' has a range [-4611686018427387904, "
            "4611686018427387904) longer than 64-bit integers count");
  // Tensor itself refuses such shapes (a user error, not a wrapped size).
  EXPECT_EQ(bind_error_of([&] {
              Tensor(F32, {0, big, 4});
            }),
            "a tensor of float32 of shape (0, 4611686018427387904, 4): its element count "
            "overflows a 64-bit integer");
}

TEST(Bind, CompoundDimensions) {
  SizeExpr N = sym("N"), M = sym("M");
  Function odd = one_input({N * 2 + 1}, N);
  EXPECT_EQ(interpret(odd, {Tensor(F32, {7})})[0].shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(bind_error_of([&] { bind_sizes(odd, {Tensor(F32, {6})}); }),
            "input 'x': expected float32[2*N + 1], got float32[6]");

  Function half = one_input({SizeExpr::floordiv(N, 2)}, N);
  EXPECT_EQ(bind_error_of([&] { bind_sizes(half, {Tensor(F32, {3})}); }),
            "input 'x': cannot infer size parameter 'N' from dimension 0 (N / 2); give it with "
            "--sizes N=...");
  EXPECT_EQ(bind_sizes(half, {Tensor(F32, {3})}, {{"N", 7}}).at("N"), 7);
  EXPECT_EQ(bind_error_of([&] {
              bind_sizes(half, {Tensor(F32, {3})}, {{"N", 8}});
            }),
            "input 'x': expected float32[N / 2] = [4], got float32[3]");

  Function product = one_input({N * M}, N);
  EXPECT_EQ(bind_error_of([&] { bind_sizes(product, {Tensor(F32, {6})}); }),
            "input 'x': cannot infer size parameters 'M', 'N' from dimension 0 (M*N); give them "
            "with --sizes M=...,N=...");

  // A compound dimension is checked against symbols that other inputs bind.
  FunctionBuilder fb("pair");
  fb.input("x", F32, {N});
  auto y = fb.input("y", F32, {N + 1});
  fb.output(y);
  Function pair = fb.finish();
  EXPECT_EQ(bind_error_of([&] {
              bind_sizes(pair, {Tensor(F32, {3}), Tensor(F32, {5})});
            }),
            "input 'y': expected float32[N + 1] = [4], got float32[5]");
}

TEST(Bind, RandomInputs) {
  FunctionBuilder fb("f");
  fb.input("x", F32, {sym("N"), 2});
  fb.output(fb.input("k", ElemType::I32, {sym("N")}));
  Function f = fb.finish();
  auto inputs = random_inputs(f, {{"N", 50}}, 9, 4);
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].describe(), "float32[50, 2]");
  EXPECT_EQ(inputs[1].describe(), "int32[50]");
  EXPECT_EQ(values_of(inputs[0]), values_of(random_tensor(F32, {50, 2}, 9)));
  EXPECT_EQ(values_of(inputs[1]), values_of(random_tensor(ElemType::I32, {50}, 10, -1, 1, 4)));
  for (double v : values_of(inputs[1])) EXPECT_TRUE(v >= 0 && v < 4) << v;
}

TEST(InterpErrors, OutOfBoundsRead) {
  // y(i) = x(i + 1) for i in 0:N reads one past the end.
  FunctionBuilder fb("shift");
  auto x = fb.input("x", F32, {sym("N")});
  fb.output(fb.compute("y", {{"i", 0, sym("N")}}, {}, ReduceOp::None,
                       make_read(x, {affine({{"i", 1}}, 1)})));
  Function f = fb.finish();
  EXPECT_EQ(
      bind_error_of([&] { interpret(f, {Tensor(F32, {4})}); }),
      "out-of-bounds read x(i + 1) in the statement defining 'y': dimension 0 index i + 1 = 4 "
      "is outside [0, 4) at i = 3");

  // Inside a loop, in a reduction, with a symbolic offset.
  FunctionBuilder fb2("loop");
  SizeExpr N = sym("N");
  auto a = fb2.input("a", F32, {N, N});
  fb2.begin_loop("it", 2);
  auto s = fb2.compute("s", {{"i", 0, N}}, {{"k", 0, N}}, ReduceOp::Sum,
                       make_read(a, {Affine::var("i"), affine({{"k", 1}, {"it", 1}}, N - 3)}));
  fb2.output(fb2.end_loop({}, {s})[0]);
  Function g = fb2.finish();
  EXPECT_EQ(bind_error_of([&] {
              interpret(g, {Tensor(F32, {3, 3})});
            }),
            "out-of-bounds read a(i, k + it + (N - 3)) in the statement defining 's': dimension 1 "
            "index k + it + (N - 3) = 3 is outside [0, 3) at it = 1, i = 0, k = 2");
}

TEST(InterpErrors, SelectEvaluatesOnlyTheTakenBranch) {
  // y(i) = i < N - 1 ? x(i + 1) : -1  never reads x(N).
  FunctionBuilder fb("shift");
  SizeExpr N = sym("N");
  auto x = fb.input("x", F32, {N});
  Expr inside = make_binary(BinOp::Lt, make_index("i"), make_size(N - 1));
  fb.output(fb.compute("y", {{"i", 0, N}}, {}, ReduceOp::None,
                       make_select(inside, make_read(x, {affine({{"i", 1}}, 1)}), f32(-1))));
  Tensor y = interpret(fb.finish(), {tensor_of(F32, {3}, {1, 2, 3})})[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{2, 3, -1}));
}

TEST(InterpErrors, IntegerDivisionByZero) {
  FunctionBuilder fb("div");
  auto a = fb.input("a", ElemType::I32, {sym("N")});
  auto b = fb.input("b", ElemType::I32, {sym("N")});
  Expr quotient = make_binary(BinOp::Div, read(a, {"i"}), read(b, {"i"}));
  Expr nonzero = make_binary(BinOp::Ne, read(b, {"i"}), make_const(0, ElemType::I32));
  auto z = fb.compute_auto("z", {{"i", 0, sym("N")}}, {}, ReduceOp::None,
                           make_select(nonzero, quotient, make_const(-1, ElemType::I32)));
  auto y = fb.compute_auto("y", {{"i", 0, sym("N")}}, {}, ReduceOp::None, quotient);
  fb.output(z);
  fb.output(y);
  Function f = fb.finish();
  Tensor ta = tensor_of(ElemType::I32, {2}, {7, 7}), tb = tensor_of(ElemType::I32, {2}, {2, 0});
  EXPECT_EQ(bind_error_of([&] {
              interpret(f, {ta, tb});
            }),
            "integer division by zero in the statement defining 'y' at i = 1");
  // Without y, the guarded division runs fine.
  Function only_z = f;
  only_z.outputs = {only_z.outputs[0]};
  only_z.output_names = {only_z.output_names[0]};
  only_z.body.pop_back();
  EXPECT_EQ(values_of(interpret(only_z, {ta, tb})[0]), (std::vector<double>{3, -1}));
}

}  // namespace
}  // namespace tenet::ir::testing
