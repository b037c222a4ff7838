// Misuse of the element types bool, uint8..uint64 and float16 (issue 15):
// the rendered diagnostics are pinned by goldens (tests/golden/lang/types/);
// docs/language.md lists the rules.
#include <gtest/gtest.h>

#include <string>

#include "tests/lang/check_util.h"
#include "tests/support/golden.h"

namespace tenet::lang {
namespace {

void expect_rejected(const std::string& golden, const std::string& source) {
  tenet::testing::expect_golden("lang/types/" + golden + ".txt",
                                tenet::testing::check_error(source, golden + ".tn") + "\n");
}

TEST(TypesRejects, BoolsAreNotReducedOrAccumulated) {
  expect_rejected("bool_reduce",
                  "def f(float(N, K) x) -> (count) {\n  count(n) +=! x(n, k) > 0\n}\n");
  expect_rejected("bool_accumulate",
                  "def f(float(N) x) -> (m) {\n  m(i) = x(i) > 0\n  m(i) += x(i) > 1\n}\n");
}

TEST(TypesRejects, MinusOfABool) {
  expect_rejected("bool_negate", "def f(bool(N) m) -> (y) {\n  y(i) = -m(i)\n}\n");
}

TEST(TypesRejects, NumberStoredInABoolOutput) {
  expect_rejected("bool_output", "def f(float(N) x) -> (bool(N) y) {\n  y(i) = x(i)\n}\n");
}

TEST(TypesRejects, UnsignedLiteralOutOfRange) {
  expect_rejected("uint8_literal", "def f(uint8(N) a) -> (y) {\n  y(i) = a(i) + 256\n}\n");
  expect_rejected("uint16_negative", "def f(uint16(N) a) -> (y) {\n  y(i) = a(i) * -1\n}\n");
}

// The 64-bit bounds are printed as text: int64's upper bound as a double is 2^63,
// which converting back to int64 would overflow (undefined; found by the fuzzer).
// Integers above 2^53 are float literals, so only the sign reaches the 64-bit check.
TEST(TypesRejects, SixtyFourBitLiteralOutOfRange) {
  expect_rejected("uint64_negative", "def f(uint64(N) a) -> (y) {\n  y(i) = a(i) * -1\n}\n");
}

TEST(TypesRejects, Float16AndFloat64DoNotMix) {
  expect_rejected("float16_float64",
                  "def f(float16(N) h, float64(N) w) -> (y) {\n  y(i) = h(i) * w(i)\n}\n");
}

TEST(TypesAccepted, DeclarationsCastsAndPromotion) {
  tenet::testing::check_ok(R"(def f(bool(N) m, uint8(N) a, uint16(N) b, uint32(N) c, uint64(N) d,
                                    float16(N) h, float(N) x) -> (p, q, r, float16(N) s, t, u) {
  p(i) = a(i) + b(i) + c(i) + d(i)
  q(i) = m(i) ? h(i) * x(i) : float32(a(i))
  r(i) = uint8(x(i)) + bool(c(i)) + uint64(i)
  s(i) = h(i) + x(i)
  t(i) = float16(x(i))
  # TC's statement-level promotion: integers onto a float16 tensor, too
  s(i) += 2 * int32(a(i))
  u(i) = c(i) - int32(a(i))
})");
}

}  // namespace
}  // namespace tenet::lang
