/// \file
/// The optimisation pipeline: the table of contents of everything that runs
/// between the checker and code generation, in order. The IR verifier runs
/// after every pass; `--dump-after=PASS|all` (or TENET_DUMP_AFTER) prints the
/// IR after the named passes.
#pragma once

#include <functional>
#include <iosfwd>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tenet::passes {

struct Pass {
  const char* name;
  const char* summary;
  std::function<void(ir::Function&)> run;
};

/// The passes in the order they run.
const std::vector<Pass>& pipeline();

struct PipelineOptions {
  /// Pass names after which to print the IR; "all" prints after every pass.
  std::set<std::string> dump_after;
  std::ostream* dump_to = nullptr;  // default std::cerr
  /// Stop after this pass (empty: run all). `tenet print --stage NAME` uses it.
  std::string stop_after;
};

/// Parses "a,b,c" (the --dump-after value); merges in TENET_DUMP_AFTER.
std::set<std::string> parse_dump_after(const std::string& list);

/// Runs the pipeline on every function of the module, verifying after each pass.
/// Throws CompileError for an unknown pass name in dump_after/stop_after.
void run_pipeline(ir::Module& m, const PipelineOptions& options = {});

}  // namespace tenet::passes
