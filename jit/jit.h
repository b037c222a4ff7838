/// \file
/// The JIT: compiles a C++ unit (the driver's `cpp` stage, cpp.h) into a
/// shared library with the system compiler, loads it, and runs it on Tensors.
///
/// Expects: a verified module; a C++17 compiler (JitOptions::cxx).
/// Guarantees:
///   - libraries are cached under <cache_dir>/<key>/ where the key hashes the
///     generated source, the runtime headers, the compiler path and its
///     `--version` output, the flags and (for -march=native) the host CPU; a
///     second compile of the same code, in this or another process, runs no
///     compiler (cache_hit() is true);
///   - a library appears in the cache only complete (written under a
///     temporary name, then renamed), so concurrent processes are safe; a
///     checksum recorded beside it is checked on every hit, and a library
///     that is damaged (or does not load, or lacks its entry points) is built
///     again once, with a warning on stderr;
///   - nothing another user could have written is loaded or run: the cache
///     folder, its entries and libraries, the compiler, the BLAS library and
///     the runtime headers are checked first (jit/trust.h; a BindError
///     says which file and what to do); new cache folders get mode 0700;
///   - the compiler runs in a process group of its own, ended with Tenet by a
///     fatal signal where the program asks for it (support/child_processes.h);
///   - a compiler failure on generated code is an InternalError carrying the
///     compiler's output and the path of the generated source (valid IR must
///     always compile); a compiler that is missing, untrusted, not a C++
///     compiler, cannot build a one-line library with these flags, or is
///     killed (out of memory) is a BindError naming where it came from
///     (JitOptions::cxx, TENET_CXX); so is a cache folder that cannot be
///     created or written (naming TENET_CACHE_DIR);
///   - a unit that calls tenet::gemm is built with -DTENET_GEMM_DNNL and
///     linked with dnnl_library() when that is not "none", and with
///     -DTENET_GEMM_CBLAS and blas_library() (a BindError names the package
///     when a library is missing);
///   - run() binds inputs with ir::bind_sizes, so wrong shapes or types are a
///     BindError before any generated code runs, and allocates the outputs.
///
/// Running the same function many times (a training step, a benchmark, a
/// binding to Python): bind it once to its sizes with jit::Executable
/// (jit/executable.h), which owns the planned workspace and the outputs;
/// its calls allocate nothing and take no page faults:
///
///   CompiledFunction f = driver::load(request, compilation).at(0);  // driver/driver.h
///   Executable step(f, {{"B", 100}});                // plans, allocates, pre-faults
///   for (...) {
///     const std::vector<Tensor>& out = step.run(inputs);  // checked, no allocation
///     ...                                            // out is overwritten next call
///   }
///
/// run() is the convenient path for one call: it allocates the outputs and
/// the workspace each time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/cpp.h"
#include "ir/ir.h"
#include "jit/loaded_unit.h"
#include "support/tensor.h"

namespace tenet::jit {

struct JitOptions {
  /// Default: $TENET_CACHE_DIR, else $XDG_CACHE_HOME/tenet, else ~/.cache/tenet,
  /// else /tmp/tenet-cache-<uid>. Must be yours and writable by nobody else
  /// (docs/security.md).
  std::string cache_dir;
  /// Default: $TENET_CXX, else the compiler that built Tenet.
  std::string cxx;
  /// Default: default_jit_flags(). Replaces the defaults entirely when set.
  std::vector<std::string> flags;
  /// Code generation options; they change the source, hence the cache key.
  codegen::CppOptions cpp;
  /// Print cache hits and compiler commands (with timings) to stderr.
  bool verbose = false;
};

/// -O3 -march=native -fopenmp -fwrapv -ffp-contract=off -fno-math-errno -fPIC -shared
/// -Wl,-Bsymbolic -std=c++17.
/// -fwrapv makes int32/int64 overflow wrap as in the interpreter (see
/// runtime/tenet_runtime.h); -ffp-contract=off rounds a * b before adding c,
/// as the interpreter does, whichever loop order the schedule chose (an FMA
/// the compiler contracts in one loop nest and not in another would change
/// bits; passes/schedule.h).
std::vector<std::string> default_jit_flags();

/// Flags added to every JIT compile (defaults or not) to avoid known
/// miscompilations of the compiler `cxx`: for GCC, -fno-tree-loop-if-convert
/// (GCC 12 vectorises some short conditional loops into wrong code at -O3).
std::vector<std::string> compiler_workaround_flags(const std::string& cxx);

/// Whether the environment asks for profiled code (TENET_PROFILE set, not
/// empty or 0): the cpp target then compiles with CppOptions::profile
/// (runtime/tenet_profile.h).
bool profile_requested();

/// The compiler used when JitOptions::cxx is empty: $TENET_CXX, else the
/// compiler that built Tenet.
std::string default_jit_compiler();

/// The CBLAS shared library that generated code calling tenet::gemm links:
/// $TENET_BLAS_LIBRARY, else OpenBLAS with OpenMP threads (Debian's
/// libopenblas0-openmp, found where Tenet was configured). "none" builds such
/// code with the plain loops of runtime/tenet_gemm.h instead. When the library
/// is missing, compiling such code is a BindError saying what to install.
std::string blas_library();

/// The oneDNN shared library whose dnnl_sgemm float32 contractions call
/// (runtime/tenet_gemm.h; twice OpenBLAS's speed where measured,
/// docs/performance.md): $TENET_DNNL_LIBRARY, else Debian's libdnnl.so.2
/// where it is installed, else "none" (float32 goes to blas_library() too).
std::string dnnl_library();

/// The directory the runtime headers are read from: $TENET_RUNTIME_DIR, else
/// the runtime/ folder of the source tree Tenet was built from.
std::string runtime_dir();

class Executable;

/// A GPU target's function bound to the shapes of buffers in the device's
/// memory (CompiledFunction::bind_on_device): the sizes, each output's type
/// and shape, and the bytes of device workspace a call needs.
struct DeviceBinding {
  ir::SizeBindings sizes;
  std::vector<TensorShape> outputs;
  int64_t workspace_bytes = 0;
};

/// One function of a loaded unit (jit/loaded_unit.h: the host's shared
/// library, or what another target's loader returns). Copies share the
/// unit, which stays loaded while any copy exists.
class CompiledFunction {
 public:
  /// `fn`, whose code `unit` holds (unit->abi_problem(fn) must be "").
  CompiledFunction(std::shared_ptr<const LoadedUnit> unit, const ir::Function& fn);

  /// Runs the function: one tensor per output, in order.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs,
                          const ir::SizeBindings& given = {}) const;

  /// Whether it runs on buffers in a device's memory (a GPU target's
  /// function; for cuda-emulated the device's memory is the host's).
  bool runs_on_device() const { return entry_.on_device != nullptr; }
  /// Binds a GPU target's function to its inputs' types and shapes (a
  /// BindError as run() gives for a mismatch, or for a CPU target's function).
  DeviceBinding bind_on_device(const std::vector<TensorShape>& inputs,
                               const ir::SizeBindings& given = {}) const;
  /// Runs on device memory, nothing copied: inputs and outputs dense of the
  /// bound shapes (an output that updates an input given the input's buffer:
  /// the update happens in place), a workspace of binding.workspace_bytes
  /// (or null: allocated for the call). Returns when the work is queued on
  /// the device's stream (docs/cuda.md).
  void run_on_device(const DeviceBinding& binding, const void* const* inputs, void* const* outputs,
                     void* workspace) const;

  /// True when the unit came from the cache, without running the compiler.
  bool cache_hit() const { return unit_->files().cache_hit; }
  /// The file loaded (the shared library).
  const std::string& library_path() const { return unit_->files().artefact_path; }
  /// The generated code it was built from.
  const std::string& source_path() const { return unit_->files().source_path; }
  const ir::Function& function() const { return *fn_; }
  const LoadedUnit& unit() const { return *unit_; }

 private:
  friend class Executable;

  std::shared_ptr<const LoadedUnit> unit_;
  std::shared_ptr<const ir::Function> fn_;
  PackedEntryPoints entry_;
  /// Per output, the input it updates (ir::Function::updated_input) or -1;
  /// per input, whether an output updates it. Found once: a call packs its
  /// buffers with them (a model's step has hundreds of inputs and outputs).
  std::vector<int> updates_;
  std::vector<bool> updated_;

  /// Throws the BindError a packed entry point's nonzero `status` means.
  [[noreturn]] void fail(int status, const ir::SizeBindings& sizes) const;
  /// The packed call's buffers (codegen/cpp.h) from one pointer per IR input
  /// and output: the inputs the ABI takes, then the outputs. An output that
  /// updates an input (ir::Function::updated_input) first receives the
  /// input's `output_bytes[i]` bytes, unless the caller passed one buffer for
  /// both (an update in place).
  void pack(const void* const* inputs, void* const* outputs,
            const std::vector<size_t>& output_bytes, std::vector<void*>& buffers) const;
};

/// Compiles (or finds in the cache) `unit`, the C++ of the named functions of
/// `m` (the driver's `cpp` stage made it with options.cpp), and returns them in
/// the same order.
std::vector<CompiledFunction> jit_compile_unit(const codegen::CppUnit& unit, const ir::Module& m,
                                               const std::vector<std::string>& functions,
                                               const JitOptions& options = {});

}  // namespace tenet::jit
