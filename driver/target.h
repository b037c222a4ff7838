/// \file
/// Targets: what a compilation runs after the stages every target shares,
/// and how its code is built and loaded. The stage table (driver.cpp) stays
/// the one table of contents: the shared stages, then the chosen target's.
///
///   parse, check, retype, ad, the shared passes (passes/pipeline.h)
///     -> the target's passes       (CPU: schedule)
///     -> the shared lowering        (liveness ... lower_loops, lower/)
///     -> the target's tail stages   (CPU: cpp)
///     -> its loader                 (CPU: the host JIT, jit/jit.h)
///
/// A target is chosen by name (Request::target, `tenet print --target
/// NAME`); an unknown name is a UsageError listing the known ones. Adding a
/// target (CUDA) is one more entry in targets() (driver/target.cpp) and a
/// file describing it, as driver/target_cpp.cpp describes the CPU's; its
/// printed code is a field of Compilation as `cpp` is the CPU target's, and
/// its loader returns jit::CompiledFunctions over its own jit::LoadedUnit
/// (jit/loaded_unit.h), built through the shared cache (jit/cache.h).
///
/// Expects: stage names unique across the shared stages and every target's
/// (a stage name means one thing whatever the target). Guarantees: a
/// target's passes run as stages of Form::Optimised (dumped, skipped and run
/// by `tenet opt` as the shared passes are); its tail stages run only for
/// requests that want code (Request::emit_code, or a dump or stop at one).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "driver/driver.h"
#include "jit/jit.h"
#include "lower/loop_tree.h"
#include "passes/pipeline.h"

namespace tenet::driver {

/// What a target asks of the shared lowering stages.
struct LoweringOptions {
  /// A GEMM statement whose pack buffers would exceed this runs in chunks
  /// (lower/gemm.h).
  int64_t pack_budget_bytes = int64_t(32) << 20;
  /// Which loops run in parallel, and whether computed indices are checked
  /// (lower_loops, lower/loops.h).
  lower::LoopOptions loops;
};

struct Target {
  /// Its name: Request::target, `--target NAME`.
  const char* name;
  /// One line for --help and messages.
  const char* summary;
  /// What its code is, for dumps: "// ----- C++ after cpp -----".
  const char* language;
  /// Its optimisation passes, run after the shared ones and before lowering.
  std::vector<passes::Pass> passes;
  /// Its options for the shared lowering stages, from the request.
  std::function<LoweringOptions(const Request&)> lowering;
  /// Its stages after the shared lowering (Form::Code): they print its code
  /// into the Compilation.
  std::vector<Stage> tail;
  /// The code of a compilation that ran the tail, as `tenet print --stage`
  /// and `--dump-after` show it.
  std::function<std::string(const Compilation&)> print;
  /// The request with which load() runs the tail on a compilation that has
  /// not: the load options that change the code (the CPU target's CppOptions)
  /// put into it.
  std::function<void(Request&, const jit::JitOptions&)> load_request;
  /// Builds (or finds in the cache) the code of a compilation that ran the
  /// tail and loads it: one function per requested function, in order.
  std::function<std::vector<jit::CompiledFunction>(const Compilation&, const jit::JitOptions&)>
      load;
};

/// The lowered functions of `c` (after the shared lowering), in order: what
/// a target's printing stage prints.
std::vector<const lower::LoweredFunction*> lowered_functions(const Compilation& c);

/// Every target, the default (kDefaultTarget) first.
const std::vector<const Target*>& targets();
/// "cpp" (for messages and --help).
std::string target_names();
/// The target named `name`, or a UsageError listing the targets.
const Target& find_target(const std::string& name);

/// The CPU target: the `schedule` pass (loop orders, shared nests, jammed
/// and vector-lane reductions for x86 and OpenMP), C++17 printing
/// (codegen/cpp.h, options Request::cpp) and the host JIT (jit/jit.h).
const Target& cpp_target();

/// The GPU targets (driver/target_cuda.cpp, docs/cuda.md): no CPU schedule;
/// every splittable loop parallel; stage `map_kernels` (lower/kernels.h);
/// then CUDA printing (`cuda`), or the same kernels printed as C++ that the
/// grid emulator runs on the CPU, built and loaded by the host JIT
/// (`cuda-emulated`).
const Target& cuda_target();
const Target& cuda_emulated_target();

}  // namespace tenet::driver
