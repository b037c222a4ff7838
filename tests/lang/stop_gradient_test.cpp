// stop_gradient and sign in the checker (docs/language.md, "Stop-gradient"):
// their arity and types, and their values (the gradient: tests/ad/).
#include <gtest/gtest.h>

#include <string>

#include "tests/lang/check_util.h"

namespace tenet::lang {
namespace {

using tenet::testing::check_error;
using tenet::testing::check_run;

std::string body(const std::string& statements) {
  return "def f(float(N) x, int32(N) k) -> (y) {\n" + statements + "\n}\n";
}

TEST(StopGradient, ArityAndTypeErrors) {
  EXPECT_ERROR(body("  y(i) = stop_gradient(x(i), x(i))"),
               "test.tn:2:10: error: 'stop_gradient' takes 1 argument, 2 given");
  EXPECT_ERROR(body("  y(i) = sign()"), "'sign' takes 1 argument, 0 given");
  EXPECT_ERROR(body("  y(i) = stop_gradient(k(i))"),
               "'stop_gradient' needs a float, but 'k(i)' is int32");
  EXPECT_ERROR(body("  y(i) = sign(x(i) > 0)"), "'sign' needs a float, but 'x(i) > 0' is bool");
  EXPECT_ERROR(body("  sign(i) = x(i)\n  y(i) = sign(i)"),
               "'sign' is a builtin function and cannot name a tensor");
}

TEST(StopGradient, ValuesAreTheOperandsAndTheSign) {
  Tensor x(ElemType::F64, {4});
  const double in[] = {-2.5, 0, 0.25, 3};
  for (int64_t i = 0; i < 4; ++i) x.set(i, in[i]);
  std::vector<Tensor> out = check_run(
      "def f(double(N) x) -> (y, s) {\n  y(i) = stop_gradient(x(i) * 2)\n"
      "  s(i) = x(i) + stop_gradient(sign(x(i)) - x(i))\n}\n",
      {x});
  ASSERT_EQ(out.size(), 2u);
  const double sign[] = {-1, 0, 1, 1};
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(out[0].get(i), 2 * in[i]);
    EXPECT_EQ(out[1].get(i), sign[i]);
  }
}

}  // namespace
}  // namespace tenet::lang
