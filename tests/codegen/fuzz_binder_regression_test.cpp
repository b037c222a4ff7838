// Replays tests/fuzz/regressions/binder/: inputs of the binder fuzz target
// (tests/fuzz/fuzz_binder.cpp, a program plus sizes and input shapes) that
// once broke Tenet or are hostile on purpose. Each must bind, run or report a
// user error, through the same code the fuzzer runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/fuzz/binder_input.h"
#include "tests/support/golden.h"

namespace tenet::codegen {
namespace {

TEST(FuzzBinderRegressions, BindOrReportAUserError) {
  namespace fs = std::filesystem;
  int replayed = 0;
  for (const char* dir : {"tests/fuzz/regressions/binder", "tests/fuzz/corpus-binder"}) {
    for (const auto& entry : fs::directory_iterator(tenet::testing::source_path(dir))) {
      if (!entry.is_regular_file() || entry.path().filename() == "README.md") continue;
      const std::string name = entry.path().filename().string();
      try {
        fuzz::run_binder_input(tenet::testing::read_file(entry.path().string()));
      } catch (const std::exception& e) {
        ADD_FAILURE() << dir << "/" << name << ": " << e.what();
      }
      ++replayed;
    }
  }
  EXPECT_GE(replayed, 8);
}

}  // namespace
}  // namespace tenet::codegen
