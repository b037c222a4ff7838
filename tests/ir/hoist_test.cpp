// The hoist pass (before/after golden: tests/passes/hoist.ir): unchanged
// outputs for sizes in every order (J below S, between S and S + I, above
// S + I).
#include "passes/hoist.h"

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/verify.h"
#include "tests/ir/ir_samples.h"
#include "tests/ir/pass_testing.h"

namespace tenet::ir {
namespace {

// The golden of the result: tests/passes/hoist.ir.golden.
TEST(HoistPass, KeepsOutputsWhereverTheGuardsSplit) {
  Module m = testing::read_ir("hoist.ir");
  Function before = m.functions[0].clone();
  passes::hoist(m.functions[0]);
  verify(m.functions[0], "hoist");
  for (int64_t j : {0, 3, 7, 10, 12, 16, 30})
    testing::expect_same_outputs(before, m.functions[0],
                                 {{"B", 3}, {"I", 5}, {"S", 7}, {"G", 4}, {"J", j}});
}

TEST(HoistPass, KeepsEverySampleUnchanged) {
  Module m = samples::all();
  for (const Function& f : m.functions) {
    Function after = f.clone();
    passes::hoist(after);
    verify(after, "hoist");
    testing::expect_same_outputs(f, after);
  }
}

}  // namespace
}  // namespace tenet::ir
