/// \file
/// The host's loaded unit (jit/loaded_unit.h): a shared library opened with
/// dlopen, its symbols looked up with dlsym.
///
/// Guarantees: the library is opened RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE
/// (unloading it could unload libgomp while OpenMP's idle workers still run
/// in it) and closed when the last CompiledFunction sharing it goes.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "jit/loaded_unit.h"

namespace tenet::jit {

class SharedLibrary final : public LoadedUnit {
 public:
  /// Opens `files.artefact_path`; the library, or null and why dlopen
  /// failed. `alias`: open it through a hard link of that name (then
  /// removed), so that a damaged library loaded earlier under the same path
  /// is not returned again by dlopen.
  static std::pair<std::shared_ptr<SharedLibrary>, std::string> open(UnitFiles files,
                                                                     const std::string& alias);
  ~SharedLibrary() override;

  void* symbol(const std::string& name) const override;

 private:
  SharedLibrary(UnitFiles files, void* handle) : LoadedUnit(std::move(files)), handle_(handle) {}
  void* handle_;
};

}  // namespace tenet::jit
