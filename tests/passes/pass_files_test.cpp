// The pass tests as files: each tests/passes/NAME.ir names on its first line
// the passes to run ("// passes: simplify,dce"); the test runs them as
// `tenet opt NAME.ir --passes=...` does (driver::run_passes, verifying after
// each), compares the printed module with NAME.ir.golden
// (TENET_UPDATE_GOLDENS=1 rewrites it), and checks with the interpreter that
// every output of a function small enough to interpret stayed bit for bit the
// same. What a golden cannot show (why a decision was taken, properties over
// many inputs) stays in the C++ pass tests (tests/ir/).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "driver/driver.h"
#include "ir/ir_parser.h"
#include "ir/printer.h"
#include "support/error.h"
#include "tests/ir/pass_testing.h"
#include "tests/support/golden.h"

namespace tenet::driver {
namespace {

constexpr const char* kPrefix = "// passes: ";
/// Functions whose inputs have more elements than this at size 7 (the
/// CapsNet-sized contractions of contraction.ir) are not interpreted.
constexpr int64_t kMaxInterpretedElements = int64_t(1) << 16;

std::vector<std::string> pass_files() {
  std::vector<std::string> names;
  for (const auto& entry :
       std::filesystem::directory_iterator(tenet::testing::source_path("tests/passes")))
    if (entry.path().extension() == ".ir") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

int64_t input_elements(const ir::Function& f) {
  int64_t total = 0;
  for (const ir::ValuePtr& in : f.inputs) {
    ir::SizeBindings sevens;
    for (const std::string& s : f.size_params) sevens[s] = 7;
    int64_t n = 1;
    for (const ir::SizeExpr& d : in->shape) n *= d.eval(sevens);
    total += n;
  }
  return total;
}

class PassFile : public ::testing::TestWithParam<std::string> {};

TEST_P(PassFile, MatchesItsGoldenAndKeepsOutputs) {
  const std::string path = "tests/passes/" + GetParam() + ".ir";
  const SourceFile file = SourceFile::read(tenet::testing::source_path(path));
  const std::string first_line = file.text().substr(0, file.text().find('\n'));
  ASSERT_EQ(first_line.rfind(kPrefix, 0), 0u) << path << " must start with '" << kPrefix << "'";
  std::vector<std::string> passes;
  std::stringstream list(first_line.substr(std::string(kPrefix).size()));
  for (std::string name; std::getline(list, name, ',');) passes.push_back(name);

  const ir::Module before = ir::parse_ir(file);
  ir::Module after;
  for (const ir::Function& f : before.functions) after.functions.push_back(f.clone());
  run_passes(after, passes);
  tenet::testing::expect_golden_file(path + ".golden", ir::print(after));
  for (size_t i = 0; i < before.functions.size(); ++i)
    if (input_elements(before.functions[i]) <= kMaxInterpretedElements)
      ir::testing::expect_same_outputs(before.functions[i], after.functions[i]);
}

INSTANTIATE_TEST_SUITE_P(Passes, PassFile, ::testing::ValuesIn(pass_files()),
                         [](const auto& test) { return test.param; });

TEST(PassFiles, CoverEveryPass) {
  std::vector<std::string> files = pass_files();
  for (const char* pass :
       {"simplify", "dce", "hoist", "index_split", "contraction", "fuse", "schedule"})
    EXPECT_NE(std::find(files.begin(), files.end(), pass), files.end()) << pass;
}

TEST(RunPasses, UnknownPassIsAUsageError) {
  ir::Module m;
  try {
    run_passes(m, {"dce", "fusion"});
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown pass 'fusion' (passes: simplify, dce, hoist, index_split, contraction, "
              "fuse, schedule)");
  }
}

}  // namespace
}  // namespace tenet::driver
