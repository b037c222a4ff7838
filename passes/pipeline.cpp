#include "passes/pipeline.h"

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "ir/printer.h"
#include "ir/verify.h"
#include "passes/contraction.h"
#include "passes/dce.h"
#include "passes/fuse.h"
#include "passes/hoist.h"
#include "passes/index_split.h"
#include "passes/schedule.h"
#include "passes/simplify.h"
#include "support/diagnostics.h"

namespace tenet::passes {

const std::vector<Pass>& pipeline() {
  static const std::vector<Pass> passes = {
      // Passes are registered here, in order (see passes/README.md).
      {"simplify", "fold constants and exact algebraic identities", simplify},
      {"dce", "remove statements no output needs", dce},
      {"hoist", "move selects on out indices out of sum reductions", hoist},
      {"index_split", "split reductions where a select on a reduce index changes branch",
       index_split},
      {"contraction", "mark large A * B contractions for the GEMM library", contraction},
      {"fuse", "inline cheap element-wise statements into their readers (save or recompute)", fuse},
      {"schedule", "choose loop orders and shared loop nests (attributes for codegen)", schedule},
  };
  return passes;
}

std::set<std::string> parse_dump_after(const std::string& list) {
  std::set<std::string> out;
  std::string all = list;
  if (const char* env = std::getenv("TENET_DUMP_AFTER")) all += std::string(",") + env;
  std::stringstream ss(all);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.insert(item);
  return out;
}

static void check_pass_name(const std::string& name) {
  if (name == "all" || name == "check") return;
  for (const Pass& p : pipeline())
    if (name == p.name) return;
  std::string known = "check";
  for (const Pass& p : pipeline()) known += std::string(", ") + p.name;
  throw CompileError("error: unknown pass '" + name + "' (passes: " + known + ")");
}

void run_pipeline(ir::Module& m, const PipelineOptions& options) {
  for (const auto& name : options.dump_after) check_pass_name(name);
  if (!options.stop_after.empty()) check_pass_name(options.stop_after);
  std::ostream& out = options.dump_to ? *options.dump_to : std::cerr;
  auto dump = [&](const char* name) {
    if (options.dump_after.count(name) || options.dump_after.count("all"))
      out << "// ----- IR after " << name << " -----\n" << ir::print(m);
  };
  dump("check");
  if (options.stop_after == "check") return;
  for (const Pass& p : pipeline()) {
    for (ir::Function& f : m.functions) {
      p.run(f);
      ir::verify(f, std::string("pass '") + p.name + "'");
    }
    dump(p.name);
    if (options.stop_after == p.name) return;
  }
}

}  // namespace tenet::passes
