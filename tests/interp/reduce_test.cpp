// Reductions, affine and guarded reads: each against a naive C++ loop nest
// that accumulates in domain order (float32 sums in double, rounded once), so
// float results must match bit for bit.

#include <cmath>
#include <limits>

#include "tests/interp/interp_test_util.h"

namespace tenet::ir::testing {
namespace {

constexpr ElemType F32 = ElemType::F32;

/// y(m) op= x(m, k) for k in lo:K, optionally starting from init(m).
Function row_reduce(ReduceOp op, SizeExpr lo, bool with_init, ElemType type = F32) {
  FunctionBuilder fb("row_" + std::string(op_name(op)));
  auto x = fb.input("x", type, {sym("M"), sym("K")});
  ValuePtr init = with_init ? fb.input("init", type, {sym("M")}) : nullptr;
  auto y = fb.compute("y", {{"m", 0, sym("M")}}, {{"k", lo, sym("K")}}, op, read(x, {"m", "k"}),
                      init, type);
  fb.output(y);
  return fb.finish();
}

TEST(InterpReduce, EachOpAgainstALoop) {
  const int64_t M = 3, K = 7;
  Tensor x = random_tensor(F32, {M, K}, 11);
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    ReduceOp op;
    float identity;
    double (*step)(double, float);  // the sum in double, max and min exact either way
  };
  for (const Case& c : std::vector<Case>{
           {ReduceOp::Sum, 0.0f, [](double a, float b) { return a + b; }},
           {ReduceOp::Max, -inf, [](double a, float b) { return std::fmax(a, double(b)); }},
           {ReduceOp::Min, inf, [](double a, float b) { return std::fmin(a, double(b)); }}}) {
    for (int64_t lo : {0, 2}) {
      Tensor y = interpret(row_reduce(c.op, lo, false), {x})[0];
      for (int64_t m = 0; m < M; ++m) {
        double acc = c.identity;
        for (int64_t k = lo; k < K; ++k) acc = c.step(acc, x.data<float>()[m * K + k]);
        EXPECT_EQ(y.data<float>()[m], float(acc)) << op_name(c.op) << " lo " << lo << " row " << m;
      }
    }
    // An empty reduction leaves the identity.
    Tensor empty = interpret(row_reduce(c.op, 0, false), {Tensor(F32, {2, 0})})[0];
    EXPECT_EQ(values_of(empty), (std::vector<double>{c.identity, c.identity}));
  }
}

TEST(InterpReduce, StartsFromInit) {
  Tensor x = tensor_of(F32, {2, 3}, {1, 2, 3, -4, -5, -6});
  Tensor init = tensor_of(F32, {2}, {10, -5});
  EXPECT_EQ(values_of(interpret(row_reduce(ReduceOp::Sum, 0, true), {x, init})[0]),
            (std::vector<double>{16, -20}));
  EXPECT_EQ(values_of(interpret(row_reduce(ReduceOp::Max, 0, true), {x, init})[0]),
            (std::vector<double>{10, -4}));
  EXPECT_EQ(values_of(interpret(row_reduce(ReduceOp::Min, 1, true), {x, init})[0]),
            (std::vector<double>{2, -6}));
  // The init tensor itself is untouched.
  EXPECT_EQ(values_of(init), (std::vector<double>{10, -5}));
}

TEST(InterpReduce, IntegerReductions) {
  Tensor x = tensor_of(ElemType::I32, {2, 3}, {5, -9, 2, 7, 7, -1});
  EXPECT_EQ(values_of(interpret(row_reduce(ReduceOp::Sum, 0, false, ElemType::I32), {x})[0]),
            (std::vector<double>{-2, 13}));
  EXPECT_EQ(values_of(interpret(row_reduce(ReduceOp::Max, 0, false, ElemType::I32), {x})[0]),
            (std::vector<double>{5, 7}));
  Tensor empty = interpret(row_reduce(ReduceOp::Min, 0, false, ElemType::I32),
                           {Tensor(ElemType::I32, {1, 0})})[0];
  EXPECT_EQ(empty.data<int32_t>()[0], std::numeric_limits<int32_t>::max());
}

TEST(InterpReduce, LongReductionsKeepDomainOrder) {
  // Reductions longer than one box of lanes, both along the reduce index
  // (3 x 5000) and across many out elements (5000 x 3), and into a scalar.
  for (auto [M, K] : {std::pair<int64_t, int64_t>{3, 5000}, {5000, 3}, {1, 10007}}) {
    Tensor x = random_tensor(F32, {M, K}, 21);
    Tensor y = interpret(row_reduce(ReduceOp::Sum, 0, false), {x})[0];
    for (int64_t m = 0; m < M; ++m) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += x.data<float>()[m * K + k];
      ASSERT_EQ(y.data<float>()[m], float(acc)) << M << "x" << K << " row " << m;
    }
  }
}

TEST(InterpReduce, Matmul) {
  // c(i, j) +=! a(i, k) * b(k, j)
  FunctionBuilder fb("matmul");
  auto a = fb.input("a", F32, {sym("I"), sym("K")});
  auto b = fb.input("b", F32, {sym("K"), sym("J")});
  fb.output(fb.compute("c", {{"i", 0, sym("I")}, {"j", 0, sym("J")}}, {{"k", 0, sym("K")}},
                       ReduceOp::Sum,
                       make_binary(BinOp::Mul, read(a, {"i", "k"}), read(b, {"k", "j"}))));
  Function f = fb.finish();
  const int64_t I = 37, K = 53, J = 29;
  Tensor A = random_tensor(F32, {I, K}, 1), B = random_tensor(F32, {K, J}, 2);
  Tensor C = interpret(f, {A, B})[0];
  ASSERT_EQ(C.shape(), (std::vector<int64_t>{I, J}));
  for (int64_t i = 0; i < I; ++i)
    for (int64_t j = 0; j < J; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += A.data<float>()[i * K + k] * B.data<float>()[k * J + j];
      ASSERT_EQ(C.data<float>()[i * J + j], float(acc)) << i << ", " << j;
    }
}

TEST(InterpReduce, ConvolutionStride2) {
  // y(b, o, i, j) +=! x(b, c, 2*i + ki, 2*j + kj) * w(o, c, ki, kj)
  SizeExpr B = sym("B"), C = sym("C"), H = sym("H"), W = sym("W"), O = sym("O"), K = sym("K");
  FunctionBuilder fb("conv_stride2");
  auto x = fb.input("x", F32, {B, C, H, W});
  auto w = fb.input("w", F32, {O, C, K, K});
  Expr body =
      make_binary(BinOp::Mul,
                  make_read(x, {Affine::var("b"), Affine::var("c"), affine({{"i", 2}, {"ki", 1}}),
                                affine({{"j", 2}, {"kj", 1}})}),
                  read(w, {"o", "c", "ki", "kj"}));
  auto y = fb.compute("y",
                      {{"b", 0, B},
                       {"o", 0, O},
                       {"i", 0, SizeExpr::floordiv(H - K, 2) + 1},
                       {"j", 0, SizeExpr::floordiv(W - K, 2) + 1}},
                      {{"c", 0, C}, {"ki", 0, K}, {"kj", 0, K}}, ReduceOp::Sum, body);
  fb.output(y);
  Function f = fb.finish();

  const int64_t nb = 2, nc = 3, nh = 11, nw = 12, no = 4, nk = 3;
  const int64_t oh = (nh - nk) / 2 + 1, ow = (nw - nk) / 2 + 1;
  Tensor X = random_tensor(F32, {nb, nc, nh, nw}, 3), Wt = random_tensor(F32, {no, nc, nk, nk}, 4);
  Tensor Y = interpret(f, {X, Wt})[0];
  ASSERT_EQ(Y.shape(), (std::vector<int64_t>{nb, no, oh, ow}));
  const float* xs = X.data<float>();
  const float* ws = Wt.data<float>();
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t o = 0; o < no; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = 0;
          for (int64_t c = 0; c < nc; ++c)
            for (int64_t ki = 0; ki < nk; ++ki)
              for (int64_t kj = 0; kj < nk; ++kj)
                acc += xs[((b * nc + c) * nh + 2 * i + ki) * nw + 2 * j + kj] *
                       ws[((o * nc + c) * nk + ki) * nk + kj];
          ASSERT_EQ(Y.data<float>()[((b * no + o) * oh + i) * ow + j], float(acc))
              << b << " " << o << " " << i << " " << j;
        }
}

TEST(InterpReduce, GuardedReadsPadWithZeros) {
  // y(i) +=! x(i + k - 1) * w(k), zero outside x: a padded 1-D convolution.
  // N = 5000 spans many boxes: border ones check lane by lane, inner ones not.
  FunctionBuilder fb("pad");
  auto x = fb.input("x", F32, {sym("N")});
  auto w = fb.input("w", F32, {3});
  Expr body = make_binary(BinOp::Mul, make_read(x, {affine({{"i", 1}, {"k", 1}}, -1)}, true),
                          read(w, {"k"}));
  fb.output(fb.compute("y", {{"i", 0, sym("N")}}, {{"k", 0, 3}}, ReduceOp::Sum, body));
  Function f = fb.finish();
  for (int64_t n : {1, 10, 5000}) {
    Tensor X = random_tensor(F32, {n}, 5), Wt = random_tensor(F32, {3}, 6);
    Tensor Y = interpret(f, {X, Wt})[0];
    for (int64_t i = 0; i < n; ++i) {
      double acc = 0;
      for (int64_t k = 0; k < 3; ++k) {
        int64_t at = i + k - 1;
        acc += (at >= 0 && at < n ? X.data<float>()[at] : 0.0f) * Wt.data<float>()[k];
      }
      ASSERT_EQ(Y.data<float>()[i], float(acc)) << "N = " << n << ", i = " << i;
    }
  }
}

TEST(InterpReduce, SymbolicOffsetsAndNegativeCoefficients) {
  // y(i) = x(N - 1 - i) + x(i + N) for x of size 2*N
  FunctionBuilder fb("reverse");
  SizeExpr N = sym("N");
  auto x = fb.input("x", F32, {N * 2});
  Expr body = make_binary(BinOp::Add, make_read(x, {affine({{"i", -1}}, N - 1)}),
                          make_read(x, {affine({{"i", 1}}, N)}));
  fb.output(fb.compute("y", {{"i", 0, N}}, {}, ReduceOp::None, body));
  Tensor y = interpret(fb.finish(), {tensor_of(F32, {6}, {1, 2, 3, 40, 50, 60})})[0];
  EXPECT_EQ(values_of(y), (std::vector<double>{43, 52, 61}));
}

}  // namespace
}  // namespace tenet::ir::testing
