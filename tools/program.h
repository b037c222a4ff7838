/// \file
/// What the `tenet` subcommands share: compiling a file through the driver,
/// choosing a function, parsing --sizes/--seed/--wrt, random inputs, and the
/// tensor summary `run` prints. User errors are thrown (CompileError, BindError,
/// UsageError) for main() to report.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "driver/driver.h"
#include "driver/target.h"
#include "ir/ir.h"
#include "support/diagnostics.h"
#include "support/tensor.h"
#include "tools/args.h"

namespace tenet::cli {

std::string require_file(const Args& a);

/// A driver request for the file `path` with --dump-after's stages (of
/// `target`'s table, driver/target.h).
driver::Request request(const std::string& path, const std::string& dump_after,
                        const std::string& target = driver::kDefaultTarget);

/// The file's front end: parsed and checked (the stages after it continue
/// from it, compile_after(front, request)), its warnings printed.
driver::Compilation front_end(const std::string& path, const std::string& dump_after,
                              const std::string& target = driver::kDefaultTarget);
/// driver::compile(request, front): the stages after the front end, their
/// warnings printed.
driver::Compilation compile_after(const driver::Compilation& front, const driver::Request& request);
/// A compilation's warnings and notes on stderr, rendered like errors
/// ("file:line:col: warning: ..."); nothing when it has none. Every command
/// that compiles shows them, before its own output or errors.
void print_warnings(const driver::Compilation& c);

/// The function named by `name`, or the file's entry function
/// (driver::default_entry: the one def that no other def calls), as the
/// checker made it.
const ir::Function& select_function(const driver::Compilation& front, const std::string& name);
/// The functions to print or emit: the one named by `name`, or every one; a
/// UsageError when the file defines none (an empty file).
std::vector<std::string> chosen_functions(const driver::Compilation& front,
                                          const std::string& name);

/// "B=2,N=3" (`option` names the option in messages): a UsageError for a malformed item, a value
/// that is not a non-negative integer or does not fit int64, a name given twice.
ir::SizeBindings parse_sizes(const std::string& spec, const std::string& option = "--sizes");
/// A decimal integer in [0, 2^64); a UsageError otherwise (no sign, no wrap-around).
uint64_t parse_seed(const std::string& text);
/// "a,b,c" as a list (empty items dropped).
std::vector<std::string> parse_list(const std::string& text);

/// Throws UsageError naming the first size parameter of an input of `fn`
/// that `given` leaves unbound (random inputs need every size);
/// `inputs_option`: the command also takes --inputs DIR (the message says so).
void require_sizes(const ir::Function& fn, const ir::SizeBindings& given, bool inputs_option);

void add_common_options(Args& a);
/// --static-sizes N=V,...: size parameters compiled in as constants
/// (driver::Request::static_sizes); static_sizes() reads it (empty where the
/// command does not declare it).
void add_static_sizes_option(Args& a);
ir::SizeBindings static_sizes(const Args& a);
/// --target NAME (driver/target.h); the default target's name by default.
void add_target_option(Args& a);
/// --backend NAME of the commands that run code: interp (the reference
/// interpreter) or a code target (driver/target.h: cpp, cuda-emulated, ...).
void add_backend_option(Args& a);
/// The code target a command compiles for: its --backend unless that is
/// interp, else its --target, else the default (cpp).
std::string code_target(const Args& a);

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
