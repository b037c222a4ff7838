// The product reduction `*=!` and `*=` onto a tensor: the derivative by each
// term is the product of the other terms, exact where terms are 0 (no
// division by 0): one zero term gets the product of the rest, the others 0;
// two or more zeros give 0 everywhere.
#include <gtest/gtest.h>

#include "ir/interp.h"
#include "tests/ad/ad_test_util.h"

namespace tenet::ad::testing {
namespace {

TEST(ProductGrad, ExclusiveProductsAreExactAtZeros) {
  const char* src = "def f(float(N, K) x) -> (p) {\n  p(i) *=! x(i, k)\n}\n";
  ir::Function g = differentiate(compile_fn(src, "f"), {{}, "", true});
  Tensor x = tensor({3, 3}, {2, 3, 4,    //   no zero
                             2, 0, 5,    //   one zero
                             0, 3, 0});  // two zeros
  std::vector<Tensor> out = ir::interpret(g, {x, tensor({3}, {10, 20, 30})});
  EXPECT_EQ(values(out.at(0)), (std::vector<double>{24, 0, 0}));
  EXPECT_EQ(values(out.at(1)), (std::vector<double>{120, 80, 60, 0, 200, 0, 0, 0, 0}));
}

TEST(ProductGrad, OntoAnExistingTensorTheInitialValueIsAFactor) {
  const char* src =
      "def f(float(N, K) x, float(N) a) -> (p) {\n  p(i) = a(i)\n  p(i) *= x(i, k)\n}\n";
  ir::Function g = differentiate(compile_fn(src, "f"), {{}, "", true});
  Tensor x = tensor({2, 2}, {2, 3, 0, 5});
  Tensor a = tensor({2}, {4, 0});
  std::vector<Tensor> out = ir::interpret(g, {x, a, tensor({2}, {1, 10})});
  EXPECT_EQ(values(out.at(0)), (std::vector<double>{24, 0}));
  EXPECT_EQ(values(out.at(1)), (std::vector<double>{12, 8, 0, 0}));  // d_x = d_p * a * others
  EXPECT_EQ(values(out.at(2)), (std::vector<double>{6, 0}));         // d_a = d_p * prod x
}

TEST(ProductGrad, Gradchecks) {
  GradcheckOptions options;
  options.request = {{}, "", true};
  options.sizes = {{"N", 3}, {"K", 4}};
  expect_gradcheck(
      "def f(float(N, K) x, float(N) a) -> (p, q) {\n  p(i) *=! x(i, k)\n  q(i) = a(i)\n"
      "  q(i) *= x(i, k) + 1\n  q(i) max= p(i)\n  q(i) min= x(i, 0) * 3\n}\n",
      "f", options);
}

// Reductions with no reduced index (TC's `+=!` over nothing) differentiate
// like the value itself.
TEST(ProductGrad, ReductionsWithNoReducedIndexGradcheck) {
  GradcheckOptions options;
  options.request = {{}, "", true};
  options.sizes = {{"N", 3}, {"K", 2}};
  expect_gradcheck(
      "def f(float(N, K) x) -> (s, p, m) {\n  s(i, k) +=! x(i, k) * x(i, k)\n"
      "  p(i, k) *=! x(i, k) + 3\n  m(i, k) max=! x(i, k) * 2\n}\n",
      "f", options);
}

}  // namespace
}  // namespace tenet::ad::testing
