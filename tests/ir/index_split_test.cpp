// The index_split pass (before/after golden: tests/passes/index_split.ir):
// unchanged outputs for sizes in every order (J below S, between S and
// S + I, above S + I).
#include "passes/index_split.h"

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/verify.h"
#include "tests/ir/ir_samples.h"
#include "tests/ir/pass_testing.h"

namespace tenet::ir {
namespace {

// The golden of the result: tests/passes/index_split.ir.golden.
TEST(IndexSplitPass, KeepsOutputsWhereverTheSplitFalls) {
  Module m = testing::read_ir("index_split.ir");
  Function before = m.functions[0].clone();
  passes::index_split(m.functions[0]);
  verify(m.functions[0], "index_split");
  // float32 sums accumulate in double; each piece rounds its partial sum to
  // float32 (passes/index_split.h): a few ulps of the largest output.
  const double ulps = 4 * 0x1p-24;
  for (int64_t j : {0, 3, 7, 10, 12, 16, 30})
    testing::expect_same_outputs(before, m.functions[0],
                                 {{"B", 3}, {"I", 5}, {"S", 7}, {"G", 4}, {"J", j}}, ulps);
  testing::expect_same_outputs(before, m.functions[0],
                               {{"B", 2}, {"I", 0}, {"S", 0}, {"G", 1}, {"J", 4}}, ulps);
}

TEST(IndexSplitPass, KeepsEverySampleUnchanged) {
  Module m = samples::all();
  for (const Function& f : m.functions) {
    Function after = f.clone();
    passes::index_split(after);
    verify(after, "index_split");
    testing::expect_same_outputs(f, after);
  }
}

}  // namespace
}  // namespace tenet::ir
