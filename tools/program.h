/// \file
/// What the `tenet` subcommands share: loading and checking a file, choosing
/// a function, parsing --sizes/--seed/--wrt, random inputs, and the tensor
/// summary `run` prints. User errors are thrown (CompileError, BindError,
/// UsageError) for main() to report.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "lang/ast.h"
#include "support/diagnostics.h"
#include "support/tensor.h"
#include "tools/args.h"

namespace tenet::cli {

/// A checked program: its source, AST, and IR after the pipeline (or a stage).
struct Program {
  std::unique_ptr<SourceFile> file;
  ast::Program ast;
  ir::Module module;
};

std::string require_file(const Args& a);

/// Parses and checks `path`, then runs the pipeline up to `stop_after` (all
/// of it when empty; "check" stops right after the checker).
Program load(const std::string& path, const std::string& dump_after,
             const std::string& stop_after = "");

/// Runs the pipeline on a module made elsewhere (a gradient), honouring --dump-after.
void optimise(ir::Module& m, const std::string& dump_after, const std::string& stop_after = "");

/// The function named by `name`, or the file's one entry function (a def
/// that no other def calls).
const ir::Function& select_function(const Program& p, const std::string& name);
/// The functions to print or emit: the one named by `name`, or every one; a
/// UsageError when the file defines none (an empty file).
std::vector<std::string> chosen_functions(const Program& p, const std::string& name);

/// "B=2,N=3": a UsageError for a malformed item, a value that is not a
/// non-negative integer or does not fit int64, a name given twice.
ir::SizeBindings parse_sizes(const std::string& spec);
/// A decimal integer in [0, 2^64); a UsageError otherwise (no sign, no wrap-around).
uint64_t parse_seed(const std::string& text);
/// "a,b,c" as a list (empty items dropped).
std::vector<std::string> parse_list(const std::string& text);

/// Throws UsageError naming the first size parameter of an input of `fn`
/// that `given` leaves unbound (random inputs need every size);
/// `inputs_option`: the command also takes --inputs DIR (the message says so).
void require_sizes(const ir::Function& fn, const ir::SizeBindings& given, bool inputs_option);

void add_common_options(Args& a);

/// Creates the --save folder (when the option is set) before anything runs,
/// so that a path that cannot be a folder is a UsageError, not a lost result.
void prepare_save_folder(const Args& a);

/// A number as `run` prints it (%.9g).
std::string fmt(double v);

/// `<label> <name>: float32[2, 3]`, a checksum line (sum, sum of squares)
/// and the first values.
void print_tensor_summary(std::ostream& os, const std::string& label, const std::string& name,
                          const Tensor& t);

}  // namespace tenet::cli
