// The dce pass: unchanged outputs (its before/after golden with loops is
// tests/passes/dce.ir).
#include "passes/dce.h"

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "ir/verify.h"
#include "tests/ir/ir_samples.h"
#include "tests/ir/pass_testing.h"

namespace tenet::ir {
namespace {

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
