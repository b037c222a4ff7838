// The dce pass: a before/after golden with loops, and unchanged outputs.
#include "passes/dce.h"

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/verify.h"
#include "tests/ir/ir_samples.h"
#include "tests/ir/pass_testing.h"
#include "tests/support/golden.h"

namespace tenet::ir {
namespace {

TEST(DcePass, Golden) {
  Module m = testing::read_ir("dce.ir");
  Function before = m.functions[0].clone();
  passes::dce(m.functions[0]);
  verify(m.functions[0], "dce");
  tenet::testing::expect_golden("ir/dce.after.ir", print(m));
  testing::expect_same_outputs(before, m.functions[0]);
}

TEST(DcePass, KeepsWhatOutputsNeed) {
  Module m = samples::all();
  for (const Function& f : m.functions) {
    Function after = f.clone();
    passes::dce(after);
    verify(after, "dce");
    EXPECT_EQ(print(after), print(f));  // the samples have no dead code
    testing::expect_same_outputs(f, after);
  }
}

TEST(DcePass, RemovesEverythingWithoutOutputs) {
  Module m = samples::all();
  Function f = m.functions[0].clone();
  f.outputs.clear();
  f.output_names.clear();
  passes::dce(f);
  EXPECT_TRUE(f.body.empty());
  EXPECT_EQ(f.inputs.size(), 1u);
}

}  // namespace
}  // namespace tenet::ir
