// Output ranges that do not start at 0 (TC's inferred `O@[min; extent]`,
// issue 15) are rejected with the rewrite that gives the same values counted
// from 0 (docs/language.md, "Output ranges start at 0"); the rendered
// diagnostics are pinned by goldens (tests/golden/lang/tc/), and each rewrite
// is checked to compute what TC hands its caller.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/interp.h"
#include "support/tensor.h"
#include "tests/lang/check_util.h"
#include "tests/support/golden.h"

namespace tenet::lang {
namespace {

void expect_rejected(const std::string& golden, const std::string& source) {
  tenet::testing::expect_golden("lang/tc/" + golden + ".txt",
                                tenet::testing::check_error(source, golden + ".tn") + "\n");
}

// Runs `source`'s only function on x (size n) and returns its first output.
Tensor run(const std::string& source, int64_t n) {
  ir::Module m = tenet::testing::check_ok(source);
  if (m.functions.empty()) return Tensor();
  return ir::interpret(m.functions[0], {random_tensor(ElemType::F32, {n}, 3)}).at(0);
}

TEST(OutputOrigin, AWhereClauseStartingAfterZero) {
  expect_rejected("output_where_from_2",
                  "def f(float(N) x) -> (y) {\n  y(i) = x(i) where i in 2:N\n}\n");
  expect_rejected("output_where_from_k",
                  "def f(float(N) x) -> (y) {\n  y(i) = x(i) where i in K + 1:N\n}\n");
  // The rewrite: TC's caller gets y[k] = x(k + 2), k in [0, N - 2).
  Tensor x = random_tensor(ElemType::F32, {6}, 3);
  Tensor y = run("def f(float(N) x) -> (y) {\n  y(i) = x(i + 2) where i in 0:N - 2\n}\n", 6);
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{4}));
  for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(y.get(k), x.get(k + 2));
}

TEST(OutputOrigin, ARangeInferredFromAShiftedRead) {
  // TC infers y@[1; N] from x(i - 1): i in [1, N + 1).
  expect_rejected("output_inferred_from_1", "def f(float(N) x) -> (y) {\n  y(i) = x(i - 1)\n}\n");
  // The rewrite, 'where i in 0:N' with 'i + 1' for i: y[k] = x(k).
  Tensor x = random_tensor(ElemType::F32, {5}, 3);
  Tensor y = run("def f(float(N) x) -> (y) {\n  y(i) = x(i + 1 - 1) where i in 0:N\n}\n", 5);
  ASSERT_EQ(y.numel(), 5);
  for (int64_t k = 0; k < 5; ++k) EXPECT_EQ(y.get(k), x.get(k));
}

TEST(OutputOrigin, AReducedIndexMayStartAfterZero) {
  // Only the left side must start at 0: TC's lower bounds of a reduced index
  // are kept (k in [1, N + 1), [1, N + 1), [2, 5) for N = 6).
  const int64_t n = 6;
  Tensor x = random_tensor(ElemType::F32, {n}, 3);
  double all = 0, odd = 0;
  for (int64_t k = 0; k < n; ++k) (k % 2 ? odd : all) += x.get(k);
  all += odd;
  EXPECT_NEAR(run("def f(float(N) x) -> (s) {\n  s +=! x(k - 1)\n}\n", n).get(0), all, 1e-5);
  EXPECT_NEAR(run("def f(float(N) x) -> (s) {\n  s +=! x(N - k)\n}\n", n).get(0), all, 1e-5);
  EXPECT_NEAR(run("def f(float(N) x) -> (s) {\n  s +=! x(2 * k - 3)\n}\n", n).get(0), odd, 1e-5);
  // Inside a select's branch the condition may be what keeps a read in
  // bounds: no lower bound is taken from it (y has N + 1 elements).
  ir::Module m =
      tenet::testing::check_ok("def f(float(N) x) -> (y) {\n  y(i) = i > 0 ? x(i - 1) : 0\n}\n");
  ASSERT_EQ(m.functions.size(), 1u);
  EXPECT_EQ(m.functions[0].outputs[0]->shape[0].str(), "N + 1");
}

TEST(OutputOrigin, AnIndexExpressionOnTheLeft) {
  expect_rejected("output_shifted_left", "def f(float(N) x) -> (y) {\n  y(i + 1) = x(i)\n}\n");
  expect_rejected("output_scaled_left", "def f(float(N) x) -> (y) {\n  y(2 * i) = x(i)\n}\n");
  // The rewrite: TC's y@[1; N] holds x, so its caller gets y[k] = x(k).
  Tensor x = random_tensor(ElemType::F32, {5}, 3);
  Tensor y = run("def f(float(N) x) -> (y) {\n  y(i) = x(i)\n}\n", 5);
  ASSERT_EQ(y.numel(), 5);
  for (int64_t k = 0; k < 5; ++k) EXPECT_EQ(y.get(k), x.get(k));
}

}  // namespace
}  // namespace tenet::lang
