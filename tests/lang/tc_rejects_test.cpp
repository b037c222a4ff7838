// Tensor Comprehensions constructs that Tenet rejects, each with a message
// that names the rewrite; the rendered diagnostics are pinned by goldens
// (tests/golden/lang/tc/).
#include <gtest/gtest.h>

#include <string>

#include "tests/lang/check_util.h"
#include "tests/support/golden.h"

namespace tenet::lang {
namespace {

void expect_rejected(const std::string& golden, const std::string& source) {
  tenet::testing::expect_golden("lang/tc/" + golden + ".txt",
                                tenet::testing::check_error(source, golden + ".tn") + "\n");
}

TEST(TcRejects, ConstantIndexOnTheLeft) {
  expect_rejected("constant_lhs_index", "def f(float(N, K) x) -> (c) {\n  c(0) +=! x(n, k)\n}\n");
  expect_rejected("constant_lhs_index_2d", "def f(float(N) x) -> (y) {\n  y(i, 0) = x(i)\n}\n");
}

TEST(TcRejects, WhereLetBindingsAndMalformedExists) {
  expect_rejected("where_let",
                  "def f(float(N) x) -> (y) {\n  y(i) = x(k) where k = i + 0, i in 0:N\n}\n");
  expect_rejected("where_exists_not_a_read",
                  "def f(float(N) x) -> (y) {\n  y(i) = x(i) where exists x?(i)\n}\n");
}

}  // namespace
}  // namespace tenet::lang
