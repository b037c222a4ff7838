// Out-of-bounds reads reported at check time when they are out of bounds for
// every size (issue 15): the checker proves it with size_proof.h, using that
// the statement's ranges are non-empty whenever it runs. The rendered
// diagnostics are pinned by goldens (tests/golden/lang/bounds/). Reads that
// are in bounds for some sizes only are left to the run-time check, as TC
// accepts them.
#include <gtest/gtest.h>

#include <string>

#include "ir/size_expr.h"
#include "lang/size_proof.h"
#include "tests/lang/check_util.h"
#include "tests/support/golden.h"

namespace tenet::lang {
namespace {

using detail::SizeFacts;
using ir::SizeExpr;

void expect_rejected(const std::string& golden, const std::string& source) {
  tenet::testing::expect_golden("lang/bounds/" + golden + ".txt",
                                tenet::testing::check_error(source, golden + ".tn") + "\n");
}

TEST(BoundsProof, ReadsOutOfBoundsForEverySizeAreErrors) {
  // The largest value N + (N - 1) reaches N whenever i's range is non-empty.
  expect_rejected("size_plus_index", "def f(float(N) x) -> (y) {\n  y(i) = x(i) + x(N + i)\n}\n");
  expect_rejected("index_minus_size", "def f(float(N) x) -> (y) {\n  y(i) = x(i) + x(i - N)\n}\n");
  // min(M, N) >= 1 when the statement runs, so i + N reaches N.
  expect_rejected("smaller_range_plus_size",
                  "def f(float(N) x, float(M) z) -> (y) {\n  y(i) = x(i) + z(i) + x(i + N)\n}\n");
  expect_rejected("reduction_where",
                  "def f(float(N) x) -> (y) {\n  y +=! x(k + N) where k in 0:N\n}\n");
  expect_rejected("loop_variable",
                  "def f(float(N) x) -> (y) {\n  for t in 0:3 {\n    y(i) = x(i) + x(N - 1 + t)\n"
                  "  }\n}\n");
}

TEST(BoundsProof, ConstantIndicesAtOrPastTheExtent) {
  expect_rejected("constant_at_size", "def f(float(N) x) -> (y) {\n  y(i) = x(i) + x(N)\n}\n");
  expect_rejected("constant_past_extent", "def f(float(4) x) -> (y) {\n  y(i) = x(i) + x(7)\n}\n");
}

TEST(BoundsProof, AConditionalReadOutOfBoundsEverywhere) {
  // No condition can make x(N + 1) valid; x(i - 1) under i > 0 is fine.
  expect_rejected("conditional_everywhere",
                  "def f(float(N) x) -> (y) {\n  y(i) = i > 0 ? x(N + 1) : x(i)\n}\n");
  tenet::testing::check_ok("def f(float(N) x) -> (y) {\n  y(i) = i > 0 ? x(i - 1) : x(i)\n}\n");
}

TEST(BoundsProof, ReadsInBoundsForSomeSizesAreAccepted) {
  // Each is in bounds for some sizes (N = 1; M < N; N odd; K = 0; M <= N):
  // the interpreter and the compiled code check them at run time.
  for (const char* body : {
           "y(i) = x(i) + x(2 * i)",
           "y(i) = x(i) + z(i) + x(i + 1)",
           "y(i) = x(i + N / 2) where i in 0:N / 2 + 1",
           "y(i) = x(i) + x(i + K) where i in 0:N - K",
           "y(i) = x(i) where i in 0:M",
       })
    tenet::testing::check_ok(std::string("def f(float(N) x, float(M) z, float(K) w) -> (y) {\n  ") +
                             body + "\n}\n");
  // A valid convolution: (H - K) / 2 + 1 windows of stride 2 stay inside H.
  tenet::testing::check_ok(
      "def f(float(H) x, float(K) w) -> (y) {\n  y(i) +=! x(2 * i + k) * w(k)\n}\n");
}

TEST(SizeFacts, ProvesWhatFollowsForIntegerSizes) {
  const SizeExpr n = SizeExpr::sym("N"), m = SizeExpr::sym("M");
  SizeFacts none;
  EXPECT_TRUE(none.proves_le(0, n));           // sizes are >= 0
  EXPECT_FALSE(none.proves_le(n, 2 * n - 1));  // not for N = 0
  EXPECT_TRUE(none.proves_le(SizeExpr::min(m, n), n));
  EXPECT_TRUE(none.proves_le(n, SizeExpr::max(m, n)));
  EXPECT_TRUE(none.proves_le(2 * SizeExpr::floordiv(n, 2), n));
  EXPECT_FALSE(none.proves_le(n, 2 * SizeExpr::floordiv(n, 2)));  // N odd
  EXPECT_TRUE(none.proves_le(n, 2 * SizeExpr::floordiv(n, 2) + 1));
  SizeFacts runs;
  runs.assume_nonnegative(SizeExpr::min(m, n) - 1);  // a range [0, min(M, N)) is non-empty
  EXPECT_TRUE(runs.proves_le(n, 2 * n - 1));
  EXPECT_TRUE(runs.proves_le(1, m));
  EXPECT_FALSE(runs.proves_le(m, n));
  // Integer rounding: 2*N >= 1 gives N >= 1.
  SizeFacts half;
  half.assume_nonnegative(2 * n - 1);
  EXPECT_TRUE(half.proves_le(1, n));
  // Facts that contradict each other prove nothing.
  SizeFacts empty;
  empty.assume_nonnegative(-n - 1);
  EXPECT_FALSE(empty.proves_le(n, 0));
}

}  // namespace
}  // namespace tenet::lang
