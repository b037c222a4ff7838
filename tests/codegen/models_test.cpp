// Every function of every model in models/ (except the full CapsNet step,
// which takes the interpreter minutes), compiled into one library and
// compared with the interpreter at small sizes.
#include <gtest/gtest.h>

#include <filesystem>

#include "driver/driver.h"
#include "jit/jit.h"
#include "lang/check.h"
#include "support/diagnostics.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/support/golden.h"

namespace tenet::codegen::testing {
namespace {

namespace fs = std::filesystem;

/// Small values for every size parameter the models use; 11x12 images keep
/// 3x3 and stride-2 windows in range.
const ir::SizeBindings kSizes = {{"B", 2},  {"N", 5},  {"K", 4}, {"D", 3},  {"T", 2}, {"Y", 2},
                                 {"X", 2},  {"E", 3},  {"I", 3}, {"J", 4},  {"M", 3}, {"C", 2},
                                 {"H", 11}, {"W", 12}, {"O", 2}, {"KH", 3}, {"KW", 3}};

TEST(Models, CompiledEqualsInterpreted) {
  // One module: the functions of all files, renamed <file>_<function>.
  ir::Module all;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(tenet::testing::source_path("models"))) {
    if (entry.path().extension() != ".tn") continue;
    ir::Module m = lang::compile_source(SourceFile::read(entry.path().string()));
    for (ir::Function& f : m.functions) {
      // CapsNet's entries are covered by tests/models at realistic weight
      // scales; here, with weights in [-1, 1), every capsule length rounds to
      // 1 and capsnet_eval's mask (the longest capsule) flips on an ulp.
      if (f.name == "capsnet" || f.name == "capsnet_eval") continue;
      f.name = entry.path().stem().string() + "_" + f.name;
      names.push_back(f.name);
      all.functions.push_back(std::move(f));
    }
  }
  ASSERT_GE(names.size(), 10u);
  std::vector<jit::CompiledFunction> compiled =
      driver::jit_compile_together(all, names, test_jit_options());
  for (const jit::CompiledFunction& f : compiled) {
    ir::SizeBindings sizes;
    for (const std::string& s : f.function().size_params) sizes[s] = kSizes.at(s);
    SCOPED_TRACE(f.function().name);
    expect_matches_interpreter(f, sizes, 41);
  }
}

}  // namespace
}  // namespace tenet::codegen::testing
