// The registered pipeline: pass order and unchanged outputs after all passes
// (the driver's stages and --dump-after: tests/driver).
#include "passes/pipeline.h"
#include "driver/driver.h"

#include <gtest/gtest.h>

#include "tests/ir/ir_samples.h"
#include "tests/ir/pass_testing.h"

namespace tenet::ir {
namespace {

TEST(Pipeline, ListsThePassesInOrder) {
  std::vector<std::string> names;
  for (const passes::Pass& p : passes::pipeline()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"simplify", "dce", "hoist", "index_split",
                                             "contraction", "fuse"}));
  // The CPU target's own pass follows the shared ones (driver/target.h).
  EXPECT_EQ(driver::pass_names(), "simplify, dce, hoist, index_split, contraction, fuse, schedule");
}

TEST(Pipeline, OutputsStayTheSame) {
  Module m = samples::all();
  Module before;
  for (const Function& f : m.functions) before.functions.push_back(f.clone());
  driver::optimise(m);
  for (size_t i = 0; i < m.functions.size(); ++i)
    testing::expect_same_outputs(before.functions[i], m.functions[i]);
}

}  // namespace
}  // namespace tenet::ir
