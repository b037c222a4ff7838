// The loop tree (lower/loops.h), printed: the one place where loops are
// decided, before any C++ text. The C++ printed from it is checked against
// the interpreter by the JIT tests; here its decisions show as goldens (a
// shared nest with vector lanes and row-local arrays, a hoisted computed
// index and a tiled block of accumulators, reduce loops narrowed to a
// window, a scatter, scans).
#include <gtest/gtest.h>

#include "driver/driver.h"
#include "lower/loops.h"
#include "tests/support/golden.h"

namespace tenet::codegen::testing {
namespace {

std::string loops_of(const std::string& model, const std::string& fn, bool grad) {
  driver::Request r;
  r.path = std::string(TENET_SOURCE_DIR) + "/models/zoo/" + model + ".tn";
  std::optional<ad::GradRequest> vjp;
  if (grad) {
    vjp.emplace();
    vjp->vjp = true;
  }
  r.functions.push_back({fn, vjp});
  r.stop_after = "lower_loops";
  const driver::Compilation c = driver::compile(r);
  std::string text;
  for (const lower::LoweredFunction& f : c.lowered->functions)
    text += lower::print(f.loops, *f.function);
  return text;
}

TEST(LoopTree, SharedNestWithLanesAndRows) {
  tenet::testing::expect_golden("lower/softmax.loops.txt", loops_of("softmax", "softmax", false));
}

TEST(LoopTree, GatherGradientHoistsItsIndexAndTilesItsBlock) {
  tenet::testing::expect_golden("lower/tc_gather.vjp.loops.txt",
                                loops_of("tc_gather", "tc_gather", true));
}

TEST(LoopTree, PoolGradientNarrowsItsWindowAndScatters) {
  tenet::testing::expect_golden("lower/avgpool2x2.vjp.loops.txt",
                                loops_of("avgpool2x2", "avgpool2x2", true));
  tenet::testing::expect_golden("lower/maxpool2x2.vjp.loops.txt",
                                loops_of("maxpool2x2", "maxpool2x2", true));
}

// Triangles (where clauses whose bound names another index) run as scans:
// cumsum upwards, its gradient (a suffix) downwards, an update adding its
// start; a window, whose bounds both move, keeps its narrowed loops.
TEST(LoopTree, TrianglesRunAsScans) {
  const std::string text = loops_of("scans", "scans", true);
  tenet::testing::expect_golden("lower/scans.vjp.loops.txt", text);
  EXPECT_NE(text.find("downwards"), std::string::npos);
  EXPECT_NE(text.find("for k#2 in max(0, i):i + 1"), std::string::npos) << text;
}

TEST(LoopTree, EveryLiveStatementHasItsRegion) {
  const std::string text = loops_of("batch_norm", "batch_norm", true);
  for (const char* result : {"mean", "d_img"})
    EXPECT_NE(text.find(std::string("statement ") + result + " ["), std::string::npos)
        << result << "\n"
        << text;
}

}  // namespace
}  // namespace tenet::codegen::testing
