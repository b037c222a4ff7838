// Replays tests/fuzz/regressions/{safetensors,idx}/: files that once broke the
// readers or are hostile on purpose (sizes whose products overflow, lengths
// beyond the file).
#include <gtest/gtest.h>

#include "tests/fuzz/checks.h"
#include "tests/fuzz/replay.h"

namespace tenet::train {
namespace {

TEST(FormatFuzzRegressions, SafetensorsReadOrReportAUserError) {
  EXPECT_GE(fuzz::replay_regressions("safetensors", fuzz::check_safetensors), 4);
}

TEST(FormatFuzzRegressions, IdxReadOrReportAUserError) {
  EXPECT_GE(fuzz::replay_regressions("idx", fuzz::check_idx), 2);
}

}  // namespace
}  // namespace tenet::train
