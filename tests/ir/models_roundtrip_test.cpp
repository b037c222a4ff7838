// print(parse(text)) == text for the IR of every models/*.tn, as the `tenet`
// CLI prints it after the checker and after the whole pipeline. (Through the
// CLI because this suite does not link the front end.)
#include <gtest/gtest.h>

#include <filesystem>

#include "ir/ir_parser.h"
#include "ir/printer.h"
#include "tests/support/golden.h"

namespace tenet::ir {
namespace {

namespace fs = std::filesystem;

// Function texts are separated by a blank line in a module and not at all
// when the CLI prints them one by one; nothing else may differ.
std::string without_blank_lines(const std::string& text) {
  std::string out;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    if (end > begin) out += text.substr(begin, end - begin) + "\n";
    begin = end + 1;
  }
  return out;
}

TEST(ModelsRoundTrip, EveryModelAtCheckAndAfterThePipeline) {
  fs::path models = tenet::testing::source_path("models");
  std::vector<fs::path> files;
  if (fs::is_directory(models))
    for (const auto& entry : fs::directory_iterator(models))
      if (entry.path().extension() == ".tn") files.push_back(entry.path());
  if (files.empty()) GTEST_SKIP() << "no models/*.tn yet";
  std::string tenet = tenet::testing::tenet_binary();
  if (!fs::exists(tenet)) GTEST_SKIP() << "the tenet CLI is not built (" << tenet << ")";
  for (const fs::path& file : files) {
    for (const char* stage : {"check", "ir"}) {
      SCOPED_TRACE(file.string() + " at stage " + stage);
      auto r =
          tenet::testing::run_command(tenet + " print '" + file.string() + "' --stage " + stage);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      Module m = parse_ir(SourceFile(file.filename().string() + ".ir", r.out));
      EXPECT_FALSE(m.functions.empty());
      EXPECT_EQ(without_blank_lines(print(m)), without_blank_lines(r.out));
    }
  }
}

}  // namespace
}  // namespace tenet::ir
