// Reductions: sums broadcast the adjoint; max=!/min=! route it to exactly one
// element per reduction, the first in domain order among ties.
#include <gtest/gtest.h>

#include "ir/interp.h"
#include "ir/printer.h"
#include "tests/ad/ad_test_util.h"

namespace tenet::ad::testing {
namespace {

// d_x of `m(i) op=! x(i, k)` for cotangent d_m = (10, 20, 30).
std::vector<double> reduce_gradient(const char* op, const Tensor& x) {
  std::string src = std::string("def f(float(N, K) x) -> (m) {\n  m(i) ") + op + " x(i, k)\n}\n";
  ir::Function g = differentiate(compile_fn(src, "f"), {{}, "", true});
  std::vector<Tensor> out = ir::interpret(g, {x, tensor({3}, {10, 20, 30})});
  return values(out.at(1));
}

TEST(ReductionGrad, MaxRoutesToTheFirstOfTies) {
  Tensor x = tensor({3, 4}, {1, 3, 3, 2,  //
                             5, 5, 5, 5,  //
                             -1, -2, -1, -3});
  EXPECT_EQ(reduce_gradient("max=!", x),
            (std::vector<double>{0, 10, 0, 0, 20, 0, 0, 0, 30, 0, 0, 0}));
}

TEST(ReductionGrad, MinRoutesToTheFirstOfTies) {
  Tensor x = tensor({3, 4}, {2, 1, 3, 1,  //
                             5, 5, 5, 5,  //
                             -1, -3, -1, -3});
  EXPECT_EQ(reduce_gradient("min=!", x),
            (std::vector<double>{0, 10, 0, 0, 20, 0, 0, 0, 0, 30, 0, 0}));
}

TEST(ReductionGrad, SumBroadcasts) {
  Tensor x = tensor({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(reduce_gradient("+=!", x), (std::vector<double>{10, 10, 20, 20, 30, 30}));
}

// Over two reduce indices "first" is row-major: (k, l) = (0, 2) before (1, 0).
TEST(ReductionGrad, TiesAcrossSeveralReduceIndicesFollowDomainOrder) {
  const char* src = "def f(float(K, L) x) -> (m) {\n  m max=! x(k, l)\n}\n";
  ir::Function g = differentiate(compile_fn(src, "f"), {});
  Tensor x = tensor({2, 3}, {0, 1, 7, 7, 2, 7});
  std::vector<Tensor> out = ir::interpret(g, {x});
  EXPECT_EQ(values(out.at(1)), (std::vector<double>{0, 0, 1, 0, 0, 0}));
}

TEST(ReductionGrad, MaxOfAnExpressionAndMinGradcheck) {
  const char* src = R"(
def f(float(N, K) x, float(K) w) -> (m, n) {
  m(i) max=! x(i, k) * w(k)
  n(i) min=! exp(x(i, k)) + w(k)
}
)";
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = {{"N", 3}, {"K", 5}};
  expect_gradcheck(src, "f", opt);
}

// At a tie the function has no derivative; gradcheck compares with one-sided
// differences there, warns, and the routed gradient is a valid one-sided one.
TEST(ReductionGrad, GradcheckAtATieWarns) {
  const char* src = "def f(float(N, K) x) -> (m) {\n  m(i) max=! x(i, k)\n}\n";
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.inputs = {tensor({2, 3}, {0.5, 0.5, -1, 0.25, 0.75, 0.75})};
  GradcheckReport r = expect_gradcheck(src, "f", opt);
  ASSERT_EQ(r.inputs.size(), 1u);
  EXPECT_EQ(r.inputs[0].kinks, 4);  // both tied elements of both rows
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("x: 4 entries at non-differentiable points"), std::string::npos)
      << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("first x[0, 0]"), std::string::npos) << r.warnings[0];
}

TEST(ReductionGrad, Matmul) {
  const char* src =
      "def mm(float(M, K) a, float(K, N) b) -> (c) {\n"
      "  c(i, j) +=! a(i, k) * b(k, j)\n}\n";
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = {{"M", 3}, {"K", 4}, {"N", 2}};
  expect_gradcheck(src, "mm", opt);
  std::string ir = grad_ir(src, "mm", opt.request);
  EXPECT_NE(ir.find("%d_a[i, k]: float32[M, K] = sum [j in 0:N] mul(%d_c[i, j], %b[k, j])"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("%d_b[k, j]: float32[K, N] = sum [i in 0:M] mul(%d_c[i, j], %a[i, k])"),
            std::string::npos)
      << ir;
}

// `+=` onto an existing tensor is a Sum with init: the init's adjoint is dT.
TEST(ReductionGrad, AccumulateOntoAnExistingTensor) {
  const char* src = R"(
def f(float(N, K) x, float(N) y0) -> (y) {
  y(i) = y0(i) * y0(i)
  y(i) += x(i, k) * y0(i)
}
)";
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = {{"N", 3}, {"K", 4}};
  expect_gradcheck(src, "f", opt);
}

TEST(ReductionGrad, Softmax) {
  const char* src = R"(
def softmax(float(N, K) z) -> (p) {
  m(n) max=! z(n, k)
  e(n, k) = exp(z(n, k) - m(n))
  t(n) +=! e(n, k)
  p(n, k) = e(n, k) / t(n)
}
)";
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = {{"N", 3}, {"K", 5}};
  expect_gradcheck(src, "softmax", opt);
}

}  // namespace
}  // namespace tenet::ad::testing
