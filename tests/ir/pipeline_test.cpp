// The registered pipeline: pass order, --dump-after output (which parses back
// section by section), and unchanged outputs after all passes.
#include "passes/pipeline.h"

#include <gtest/gtest.h>

#include <sstream>

#include "ir/ir_parser.h"
#include "ir/printer.h"
#include "tests/ir/ir_samples.h"
#include "tests/ir/pass_testing.h"

namespace tenet::ir {
namespace {

TEST(Pipeline, ListsThePassesInOrder) {
  std::vector<std::string> names;
  for (const passes::Pass& p : passes::pipeline()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"simplify", "dce", "hoist", "index_split",
                                             "contraction", "fuse", "schedule"}));
}

TEST(Pipeline, DumpsParseBackAndOutputsStayTheSame) {
  Module m = samples::all();
  Module before;
  for (const Function& f : m.functions) before.functions.push_back(f.clone());
  std::ostringstream dump;
  passes::PipelineOptions options;
  options.dump_after = {"all"};
  options.dump_to = &dump;
  passes::run_pipeline(m, options);

  // One section per stage, each a whole module in the text form.
  std::vector<std::string> stages;
  std::string text = dump.str(), marker = "// ----- IR after ";
  for (size_t at = text.find(marker); at != std::string::npos;) {
    size_t name_end = text.find(" -----\n", at);
    ASSERT_NE(name_end, std::string::npos);
    stages.push_back(text.substr(at + marker.size(), name_end - at - marker.size()));
    size_t next = text.find(marker, name_end);
    std::string section =
        text.substr(at, next == std::string::npos ? std::string::npos : next - at);
    Module parsed = parse_ir(SourceFile(stages.back() + ".ir", section));
    EXPECT_EQ(parsed.functions.size(), m.functions.size());
    at = next;
  }
  EXPECT_EQ(stages, (std::vector<std::string>{"check", "simplify", "dce", "hoist", "index_split",
                                              "contraction", "fuse", "schedule"}));
  EXPECT_EQ(text.substr(text.rfind(marker)), marker + "schedule -----\n" + print(m));
  for (size_t i = 0; i < m.functions.size(); ++i)
    testing::expect_same_outputs(before.functions[i], m.functions[i]);
}

TEST(Pipeline, RejectsUnknownPassNames) {
  Module m = samples::all();
  passes::PipelineOptions options;
  options.dump_after = {"simplfy"};
  try {
    passes::run_pipeline(m, options);
    FAIL() << "no error for an unknown pass";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown pass 'simplfy' (passes: check, simplify, dce,"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tenet::ir
