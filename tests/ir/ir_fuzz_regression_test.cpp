// Replays tests/fuzz/regressions/ir/: IR text that once broke the parser or is
// hostile on purpose (deep nesting, sizes beyond 64 bits).
#include <gtest/gtest.h>

#include "tests/fuzz/checks.h"
#include "tests/fuzz/replay.h"

namespace tenet::ir {
namespace {

TEST(IrFuzzRegressions, ParseOrReportAUserError) {
  EXPECT_GE(fuzz::replay_regressions("ir", fuzz::check_ir), 2);
}

}  // namespace
}  // namespace tenet::ir
