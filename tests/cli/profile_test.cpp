// TENET_PROFILE (runtime/tenet_profile.h): the JIT compiles each top-level
// statement of a function as a region of a profile table, which writes one
// line per region when the program ends: the function, the region, its
// calls, seconds, the pieces its parallel work was cut into, and what it
// computes. Without the variable the code has no regions (the goldens).
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>

#include "tests/cli/cli_util.h"

namespace tenet::testing {
namespace {

class Profile : public Cli {};

TEST_F(Profile, EveryStatementOfTheStepIsARegionWithItsTimeAndPieces) {
  const std::string out = (dir_ / "profile.tsv").string();
  const CommandResult r =
      run_in_source("run models/mnist_cnn.tn --grad --backend cpp --sizes B=64",
                    "TENET_PROFILE=" + out +
                        " TENET_PARALLEL_CORES=16 TENET_CACHE_DIR=" + (dir_ / "cache").string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::istringstream lines(read_file(out));
  const std::regex row("profile\\tmnist_cnn(_grad)?\\t([0-9]+)\\t1\\t([0-9.]+)\\t([0-9]+)\\t(.*)");
  int rows = 0;
  bool dense = false, softmax = false;
  double seconds = 0;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, row)) << line;
    ++rows;
    seconds += std::stod(m[3].str());
    const int64_t pieces = std::stoll(m[4].str());
    // The first dense layer (64 x 128 x 9216, 151 MFLOP): a GEMM of 32 tiles
    // for a 16-core machine (with oneDNN or the CBLAS library alike).
    if (m[5].str().rfind("fc1(b, o) +=!", 0) == 0) dense = pieces == 32;
    if (m[5].str().find("log_probs") != std::string::npos) softmax = pieces == 64;  // the batch
  }
  EXPECT_GE(rows, 20) << read_file(out);
  EXPECT_TRUE(dense) << read_file(out);
  EXPECT_TRUE(softmax) << read_file(out);
  EXPECT_GT(seconds, 0.0);
}

}  // namespace
}  // namespace tenet::testing
