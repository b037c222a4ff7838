/// \file
/// The loaded-unit interface: code built from one printed unit and loaded
/// into this process, whatever the target. A target's loader (driver/target.h)
/// returns its functions as CompiledFunctions (jit/jit.h) sharing one
/// LoadedUnit; CompiledFunction::run and Executable (jit/executable.h) call
/// them only through the packed ABI (codegen/cpp.h), so they run any
/// target's code the same way.
///
/// The host's unit is a shared library opened with dlopen (SharedLibrary,
/// jit/shared_library.h); a device target's would be a module whose packed
/// entry points are host functions that launch its kernels.
///
/// Expects: a subclass that looks its symbols up. Guarantees: abi_problem()
/// checks every entry point a CompiledFunction calls and the ABI signature
/// the unit reports (`<symbol>__signature()` == codegen::abi_signature(fn))
/// before entry_points() hands them out.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "ir/ir.h"

namespace tenet::jit {

/// One function's entry points by the packed ABI (codegen/cpp.h, "The ABI").
struct PackedEntryPoints {
  /// `tenet_f__packed`: allocates its workspace. 0 ok, 1 a negative size,
  /// 2 no memory, 3 a computed index out of range (the message: `error`).
  using Packed = int (*)(const int64_t* sizes, void* const* buffers);
  /// `tenet_f__packed_workspace_bytes`: -1 for a negative size or an overflow.
  using WorkspaceBytes = int64_t (*)(const int64_t* sizes);
  /// `tenet_f__packed_with_workspace`: on a workspace of WorkspaceBytes bytes.
  using WithWorkspace = int (*)(const int64_t* sizes, void* const* buffers, void* workspace);
  /// `tenet_f__error`: the failure status 3 reports.
  using ErrorMessage = const char* (*)();
  /// `tenet_f__packed_on_device` (GPU targets): WithWorkspace on device
  /// memory, nothing copied; a null workspace is allocated for the call.
  using OnDevice = WithWorkspace;

  Packed packed = nullptr;
  WorkspaceBytes workspace_bytes = nullptr;
  WithWorkspace with_workspace = nullptr;
  /// Present only when the function checks computed indices (or runs on a device).
  ErrorMessage error = nullptr;
  /// Present only for a GPU target's function.
  OnDevice on_device = nullptr;
};

/// What was built and where it came from, for messages and tests.
struct UnitFiles {
  /// The file loaded (a shared library; a device target's module).
  std::string artefact_path;
  /// The printed source it was built from.
  std::string source_path;
  /// True when the artefact came from the cache (jit/cache.h) without
  /// running a compiler.
  bool cache_hit = false;
};

/// A loaded unit; unloaded when the last CompiledFunction sharing it goes.
class LoadedUnit {
 public:
  explicit LoadedUnit(UnitFiles files) : files_(std::move(files)) {}
  LoadedUnit(const LoadedUnit&) = delete;
  LoadedUnit& operator=(const LoadedUnit&) = delete;
  virtual ~LoadedUnit() = default;

  /// The address of `name` in the unit; nullptr when it has none.
  virtual void* symbol(const std::string& name) const = 0;

  const UnitFiles& files() const { return files_; }

  /// Why the unit cannot run `fn` by the packed ABI ("" when it can): an
  /// entry point is missing, or its signature is another ABI's.
  std::string abi_problem(const ir::Function& fn) const;
  /// `fn`'s entry points (abi_problem(fn) must be "").
  PackedEntryPoints entry_points(const ir::Function& fn) const;

 private:
  UnitFiles files_;
};

}  // namespace tenet::jit
