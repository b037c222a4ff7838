// Gradients of reshapes: the adjoint of y = reshape(x, ...) is d_y reshaped
// back to x's shape (a gather marked as a reshape, never a scatter),
// gradchecked on inputs, on reshapes of reshapes, in loops and as a scalar
// loss.
#include <gtest/gtest.h>

#include "ir/interp.h"
#include "tests/ad/ad_test_util.h"

namespace tenet::ad::testing {
namespace {

TEST(ReshapeGrad, AdjointIsTheReshapeOfTheCotangent) {
  const char* src = R"(
def f(float(B, 2, 3) x) -> (y) {
  y = reshape(x, B, 6)
}
)";
  std::string ir = grad_ir(src, "f", {{}, "", true});
  EXPECT_NE(ir.find("attrs(reshape = true, ad = backward \"reshape back to the shape of x\")\n"
                    "  %d_x[b, i1, i2]: float32[B, 2, 3] = %d_y[b, 3*i1 + i2]"),
            std::string::npos)
      << ir;
  EXPECT_EQ(ir.find("gather"), std::string::npos) << ir;
  ir::Function g = differentiate(compile_fn(src, "f"), {{}, "", true});
  Tensor x = random_tensor(ElemType::F32, {2, 2, 3}, 1),
         d_y = random_tensor(ElemType::F32, {2, 6}, 2);
  std::vector<Tensor> r = ir::interpret(g, {x, d_y});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(values(r[0]), values(x));    // y: the same elements
  EXPECT_EQ(values(r[1]), values(d_y));  // d_x: the same elements back
}

TEST(ReshapeGrad, ChainsLoopsAndCalls) {
  const char* src = R"(
def split(float(N, 6) a) -> (s) {
  s = reshape(a, N, 2, 3)
}
def f(float(N, 6) x, float(3, 2) w) -> (out) {
  h = reshape(x, N, 6)
  for it in 0:2 {
    s = split(h)
    t(n, i, j) = tanh(s(n, i, j) * w(j, i))
    h = reshape(t, N, 6)
  }
  out = reshape(h, N * 3, 2)
}
)";
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = {{"N", 2}};
  GradcheckReport r = expect_gradcheck(src, "f", opt);
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[0].checked, 12);
}

TEST(ReshapeGrad, ScalarLossThroughAReshape) {
  const char* src = R"(
def f(float(N) x) -> (loss) {
  t(i) +=! x(n) * x(n) where i in 0:1
  loss = reshape(t)
}
)";
  GradcheckOptions opt;
  opt.sizes = {{"N", 4}};
  expect_gradcheck(src, "f", opt);
}

}  // namespace
}  // namespace tenet::ad::testing
