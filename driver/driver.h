/// \file
/// The compiler driver: one request goes through every stage, in the order of
/// the table in driver.cpp (the table of contents of the whole compiler): the
/// stages every target shares, then the chosen target's (driver/target.h):
///
///   parse -> check -> retype -> ad -> simplify ... fuse      (shared)
///         -> schedule                                        (the target's passes)
///         -> liveness -> lower_gemm -> ... -> lower_loops    (shared lowering)
///         -> cpp                                             (the target's tail)
///
/// (the stages of the default target, `cpp`: C++ for the CPU, loaded by the
/// host JIT, jit/jit.h).
///
/// Every caller (the CLI, the Python package, the trainer, the benchmarks)
/// says what it wants in a Request and gets a Compilation back, from which it
/// prints, interprets or builds and loads the target's code (load()). No
/// stage is run anywhere else, and the request's defaults live here (the
/// differentiated output's in ad::resolve_outputs).
///
/// Expects: a Request naming source text or a file. Guarantees: every stage
/// that produces IR is followed by ir::verify; user errors are CompileError
/// (in the program text or a gradient request) or UsageError (an unknown
/// target, stage or pass name, listing the known ones).
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ad/grad.h"
#include "codegen/cpp.h"
#include "ir/ir.h"
#include "jit/jit.h"
#include "lang/ast.h"
#include "lower/lowered.h"
#include "support/diagnostics.h"
#include "support/types.h"

namespace tenet::driver {

/// The target a Request names unless it names another: C++ for the CPU.
inline constexpr const char* kDefaultTarget = "cpp";

/// One function to compile: a def of the source, as declared or its gradient.
struct FunctionRequest {
  std::string name;
  /// Differentiate it (ad/grad.h): the result is `<name>_grad`. An empty
  /// output means ad::resolve_outputs' default (the only output, or the only
  /// float scalar among several).
  std::optional<ad::GradRequest> grad;
  /// The function's name in the result (and in the code's symbols); empty:
  /// `name`, or `<name>_grad` for a gradient. Several requests of one
  /// function (a forward and its backwards, each under a name) need it.
  std::string as = {};
};

struct Request {
  /// The program: `text` when set (then `path` only names it in messages),
  /// else the file at `path`.
  std::string path;
  std::optional<std::string> text;
  /// The functions to compile, in this order; empty: every def as declared.
  std::vector<FunctionRequest> functions;
  /// Every float value, constant and cast in this type (ad/retype.h); unset:
  /// as declared.
  std::optional<ElemType> float_type;
  /// Size parameters compiled in as constants (ir/specialise.h): each
  /// requested function is specialised to them before AD and the passes.
  /// Each must name a size parameter of every requested function.
  ir::SizeBindings static_sizes;
  /// Optimisation passes not to run, e.g. {"contraction"} keeps every
  /// contraction in loops instead of GEMM calls.
  std::set<std::string> skip_passes;
  /// The target (driver/target.h), by name: its passes and tail stages
  /// follow the shared ones.
  std::string target = kDefaultTarget;
  /// Run the lowering stages and the target's tail (`cpp`) and keep its
  /// code. They also run when stop_after or dump_after names one of them.
  /// Callers that only run the code leave it off and call load(), which runs
  /// them with the loader's options.
  bool emit_code = false;
  /// The `cpp` target's options: how it prints C++ (and its lowering
  /// options: CppOptions::pack_budget_bytes).
  codegen::CppOptions cpp;

  /// Stage names after which to print what the stage made ("all": every
  /// stage), to `dump_to` (std::cerr when null). TENET_DUMP_AFTER adds to it.
  std::set<std::string> dump_after;
  std::ostream* dump_to = nullptr;
  /// Stop after this stage (empty: run them all).
  std::string stop_after;
};

/// What the stages made, each field filled by the stage named beside it.
struct Compilation {
  std::shared_ptr<const SourceFile> file;
  std::shared_ptr<const ast::File> ast;       // parse
  std::shared_ptr<const ir::Module> checked;  // check: every def, as the checker made it
  /// retype, ad: the requested functions, in request order, before any
  /// optimisation (a gradient as AD derived it).
  ir::Module derived;
  /// The optimisation passes: `derived` optimised, what code generation sees.
  ir::Module optimised;
  /// liveness, lower_gemm, plan_memory: the optimised functions as every
  /// target receives them (lower/lowered.h), over a copy of `optimised`
  /// that the lowered forms point into.
  struct Lowering {
    ir::Module module;
    std::vector<lower::LoweredFunction> functions;
  };
  std::shared_ptr<Lowering> lowered;
  /// The `cpp` target's code (its stage `cpp`); another target's code is a
  /// field of its own.
  std::optional<codegen::CppUnit> cpp;
  /// The target whose stages ran (Request::target).
  std::string target = kDefaultTarget;
  /// The last stage run ("" before the first).
  std::string stage;
  /// Warnings and notes for the user (with spans in `file`) from the stages
  /// this compile() ran (not those of the compilation it continued): the
  /// checker's (lang::Checked::warnings), and any later stage's. Callers show
  /// them (render_warnings(); the CLI on stderr, Python as warnings.warn).
  std::vector<Diagnostic> warnings;

  /// Every warning rendered like an error ("file:line:col: warning: ...",
  /// the source line, a caret), separated by newlines; "" when none.
  std::string render_warnings() const;

  /// The module of the last stage that produces IR (checked, derived or
  /// optimised); empty before `check`.
  const ir::Module& ir() const;
  /// The requested functions' names, in request order (`<name>_grad` for a gradient).
  std::vector<std::string> function_names() const;
};

/// What a stage produces (and what --dump-after prints for it). Code: the
/// target's code (driver/target.h, Target::print).
enum class Form { Ast, Checked, Derived, Optimised, Lowered, Loops, Code };

struct Stage {
  const char* name;
  const char* summary;
  Form form;
  std::function<void(Compilation&, const Request&)> run;
};

/// Every stage of `target`'s table, in the order they run: the shared ones
/// and the target's. A UsageError for an unknown target, listing them.
const std::vector<Stage>& stages(const std::string& target = kDefaultTarget);
/// "parse, check, retype, ..." (for messages and --help).
std::string stage_names(const std::string& target = kDefaultTarget);
/// The stage named `name` in `target`'s table, or a UsageError listing them.
const Stage& find_stage(const std::string& name, const std::string& target = kDefaultTarget);

/// Runs the request through every stage (up to stop_after).
Compilation compile(const Request& request);
/// Continues `from` (a compilation of the same source stopped after an
/// earlier stage, e.g. `check` to choose a function first): the stages after
/// from.stage run; what `from` made is shared or copied, never changed.
Compilation compile(const Request& request, const Compilation& from);

/// The requested functions of `c` (compiled at least through the
/// optimisation passes), lowered and printed by the request's target (with
/// the options' CppOptions for `cpp`) unless `c` already ran its tail, then
/// built and loaded by the target's loader (`cpp`: the host JIT, jit/jit.h),
/// in request order. `request` is the one `c` was compiled from (its dumps
/// still apply).
std::vector<jit::CompiledFunction> load(const Request& request, const Compilation& c,
                                        const jit::JitOptions& options = {});

// ---- IR made by hand (tests, `tenet opt` output) ---------------------------
// The same stages of the table, entered after parsing and checking.

/// Every optimisation pass of `target`'s table in order (the shared ones,
/// then the target's), verified after each.
void optimise(ir::Module& m, const std::string& target = kDefaultTarget);
/// The named functions of `m` (every one when empty), taken as optimised,
/// through the lowering stages and `cpp`.
codegen::CppUnit emit_cpp(const ir::Module& m, const std::vector<std::string>& functions = {},
                          const codegen::CppOptions& options = {});
/// The named functions of `m` (optimised for `target`: optimise()) through
/// the lowering stages and `target`'s tail: its code (a C++ unit, with a
/// CUDA source for the `cuda` target).
codegen::CppUnit emit_code(const ir::Module& m, const std::vector<std::string>& functions,
                           const std::string& target, const codegen::CppOptions& options = {});
/// The same, built and loaded into one library, in the order named, by
/// `target`'s tail and loader (`m` optimised for that target: optimise()).
std::vector<jit::CompiledFunction> jit_compile_together(const ir::Module& m,
                                                        const std::vector<std::string>& functions,
                                                        const jit::JitOptions& options = {},
                                                        const std::string& target = kDefaultTarget);
/// One function in a library of its own.
jit::CompiledFunction jit_compile(const ir::Module& m, const std::string& function,
                                  const jit::JitOptions& options = {});

/// "simplify, dce, ..." (the optimisation passes of `target`'s table, for
/// messages and --help).
std::string pass_names(const std::string& target = kDefaultTarget);

/// `tenet opt`: runs the named optimisation passes (the shared ones of
/// passes/pipeline.h and `target`'s) on every function, in the given order
/// (repeats allowed), verifying after each; a UsageError for an unknown
/// name, listing the passes.
void run_passes(ir::Module& m, const std::vector<std::string>& passes,
                const std::string& target = kDefaultTarget);

/// "// ----- NAME.h -----\n<header>// ----- NAME.cpp -----\n<source>".
std::string print_cpp(const codegen::CppUnit& unit);

}  // namespace tenet::driver
