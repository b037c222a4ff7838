// The misuse of Tensor Comprehensions' expression syntax (issue 15): the
// conditional, promotion's limits, TC's builtins and '%'. Each message is
// pinned; the language reference (docs/language.md) lists them.
#include <gtest/gtest.h>

#include <string>

#include "tests/lang/check_util.h"

namespace tenet::lang {
namespace {

using tenet::testing::check_error;
using tenet::testing::check_ok;

std::string body(const std::string& statements) {
  return "def f(float(N) x, double(N) w, int32(N) k) -> (y) {\n" + statements + "\n}\n";
}

#define EXPECT_MESSAGE(statements, message)                                 \
  do {                                                                      \
    std::string text_ = check_error(body(statements));                      \
    EXPECT_NE(text_.find(message), std::string::npos) << "got:\n" << text_; \
  } while (0)

TEST(TcExprErrors, Conditional) {
  EXPECT_MESSAGE("  y(i) = x(i) ? 1 : 0",
                 "the condition of '?:' must be bool, but 'x(i)' is float32");
  EXPECT_MESSAGE("  y(i) = x(i) > 0 ? x(i) : w(i)",
                 "type mismatch: float32 and float64 operands of '?:'");
  EXPECT_MESSAGE("  y(i) = x(i) > 0 ? x(i) 0",
                 "test.tn:2:26: error: expected ':' of the conditional expression, found '0'");
}

TEST(TcExprErrors, PromotionLimits) {
  EXPECT_MESSAGE("  y(i) = x(i) * w(i)", "type mismatch: float32 and float64 operands of '*'");
  EXPECT_MESSAGE("  y(i) = sin(i)", "'sin' needs a float, but 'i' is int64");
  EXPECT_MESSAGE("  y(i) = pow(k(i), 2)", "'pow' needs float operands, but 'k(i)' is int32");
  EXPECT_MESSAGE("  y(i) = atan2(k(i), 2)", "'atan2' needs float operands, but 'k(i)' is int32");
  EXPECT_MESSAGE("  y(i) = sin(x(i) > 0)", "'sin' needs a float, but 'x(i) > 0' is bool");
}

TEST(TcExprErrors, Builtins) {
  EXPECT_MESSAGE("  y(i) = max(x(i))", "'max' takes 2 arguments, 1 given");
  EXPECT_MESSAGE("  y(i) = rsqrt(x(i), 2)", "'rsqrt' takes 1 argument, 2 given");
  EXPECT_MESSAGE("  y(i) = fma(x(i), 2)", "'fma' takes 3 arguments, 2 given");
  EXPECT_MESSAGE("  min(i) = x(i)", "'min' is a builtin function and cannot name a tensor");
  EXPECT_MESSAGE("  y(i) = x(i) % 2", "'%' is the remainder of integers, but 'x(i)' is float32");
  EXPECT_MESSAGE("  y(i) = k(i) % 2.5", "'%' is the remainder of integers, but '2.5' is float");
  EXPECT_MESSAGE("  y(i) = x(i % 4)",
                 "cannot infer the range of index 'i': no unguarded read uses it");
}

TEST(TcExprErrors, AcceptedForms) {
  check_ok(body("  y(i) = max(x(i), k(i)) + min(i, 2) + (k(i) % 3) * x(i) + fabs(k(i))"));
  check_ok(body("  y(i) = i > 0 ? x(i - 1) : i < N - 1 ? x(i + 1) : x(i)"));
  // A bool meets a number as 0 or 1 of the number's type (docs/language.md).
  check_ok(body("  y(i) = x(i) * (x(i) > 0) + max(x(i), x(i) > 0) + (x(i) > 0 ? x(i) > 1 : 0)"));
}

}  // namespace
}  // namespace tenet::lang
