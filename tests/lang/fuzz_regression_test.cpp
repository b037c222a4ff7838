// Replays tests/fuzz/regressions/frontend/: inputs that once broke the front end (found
// by scripts/fuzz.sh) or that are hostile on purpose. compile_source must
// either succeed or report a user error; crashes, sanitizer reports and
// internal errors fail the test.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "lang/check.h"
#include "support/diagnostics.h"
#include "support/error.h"
#include "tests/support/golden.h"

namespace tenet::lang {
namespace {

TEST(FuzzRegressions, CompileOrReportAUserError) {
  namespace fs = std::filesystem;
  fs::path dir = tenet::testing::source_path("tests/fuzz/regressions/frontend");
  int replayed = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().filename() == "README.md") continue;
    std::string name = entry.path().filename().string();
    SourceFile file(name, tenet::testing::read_file(entry.path().string()));
    try {
      compile_source(file);
    } catch (const CompileError&) {
      // expected: a syntax or semantic error with a diagnostic
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": " << e.what();
    }
    ++replayed;
  }
  EXPECT_GE(replayed, 5);
}

}  // namespace
}  // namespace tenet::lang
