// stop_gradient (PyTorch's detach) and sign: the straight-through estimator
// has the value of sign(h) and exactly the gradient of h; a stopped operand
// gets no gradient, and what reaches the output past it is gradchecked.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/interp.h"
#include "tests/ad/ad_test_util.h"

namespace tenet::ad::testing {
namespace {

TEST(StopGradient, StraightThroughEstimatorPassesTheGradientUnchanged) {
  const char* src = R"(
def ste(float(N) h) -> (y) {
  y(i) = h(i) + stop_gradient(sign(h(i)) - h(i))
}
)";
  ir::Function g = differentiate(compile_fn(src, "ste"), {{}, "", true});
  Tensor h = tensor({5}, {-0.75, 0, 0.5, 2, -3});
  Tensor d_y = tensor({5}, {1, 2, 3, 4, 5});
  std::vector<Tensor> r = ir::interpret(g, {h, d_y});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(values(r[0]), (std::vector<double>{-1, 0, 1, 1, -1}));  // torch.sign(h)
  EXPECT_EQ(values(r[1]), values(d_y));                             // d_h = d_y, exactly
}

TEST(StopGradient, StoppedOperandGetsNoGradient) {
  const char* src = R"(
def f(float(N) x, float(N) s) -> (y) {
  y(i) = x(i) * stop_gradient(exp(s(i)) + x(i))
}
)";
  ir::Function g = differentiate(compile_fn(src, "f"), {{}, "", true});
  Tensor x = tensor({3}, {0.5, -1, 2}), s = tensor({3}, {0, 1, -1});
  Tensor d_y = tensor({3}, {1, 1, 1});
  std::vector<Tensor> r = ir::interpret(g, {x, s, d_y});
  ASSERT_EQ(r.size(), 3u);
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_FLOAT_EQ(r[1].get(i), std::exp(s.get(i)) + x.get(i)) << "d_x[" << i << "]";
    EXPECT_EQ(r[2].get(i), 0) << "d_s[" << i << "]";
  }
  // Through x alone the stopped factor is a constant: finite differences of
  // x * c(s) agree when s is not perturbed and x does not reach c.
  GradcheckOptions opt;
  opt.request = {{"x"}, "", true};
  opt.sizes = {{"N", 4}};
  expect_gradcheck(
      "def f(float(N) x, float(N) s) -> (y) {\n"
      "  y(i) = x(i) * stop_gradient(exp(s(i)) * sign(s(i)))\n}\n",
      "f", opt);
}

TEST(StopGradient, PrintedGradientHasNoAdjointForTheStoppedRead) {
  std::string ir = grad_ir("def f(float(N) x) -> (y) {\n  y(i) = x(i) * stop_gradient(x(i))\n}\n",
                           "f", {{}, "", true});
  EXPECT_NE(ir.find("stop_gradient"), std::string::npos) << ir;
  // d_x = d_y * stop_gradient(x): one term, not two.
  EXPECT_EQ(ir.find("d_x.1"), std::string::npos) << ir;
}

}  // namespace
}  // namespace tenet::ad::testing
