// Replays tests/fuzz/regressions/npy/: .npy files that once broke the reader or
// are hostile on purpose (impossible shapes, sizes beyond 64 bits).
#include <gtest/gtest.h>

#include "tests/fuzz/checks.h"
#include "tests/fuzz/replay.h"

namespace tenet {
namespace {

TEST(NpyFuzzRegressions, ReadOrReportAUserError) {
  EXPECT_GE(fuzz::replay_regressions("npy", fuzz::check_npy), 4);
}

}  // namespace
}  // namespace tenet
