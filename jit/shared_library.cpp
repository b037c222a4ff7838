#include "jit/shared_library.h"

#include <dlfcn.h>
#include <unistd.h>

namespace tenet::jit {

std::pair<std::shared_ptr<SharedLibrary>, std::string> SharedLibrary::open(
    UnitFiles files, const std::string& alias) {
  const std::string& path = files.artefact_path;
  std::string opened = path;
  if (!alias.empty() && ::link(path.c_str(), alias.c_str()) == 0) opened = alias;
  // RTLD_NODELETE: unloading the library could unload libgomp with it while
  // OpenMP's idle worker threads still run inside it (a crash at exit).
  void* handle = ::dlopen(opened.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  const char* why = handle ? nullptr : ::dlerror();
  if (opened != path) ::unlink(opened.c_str());
  if (!handle) return {nullptr, why ? why : "dlopen failed"};
  return {std::shared_ptr<SharedLibrary>(new SharedLibrary(std::move(files), handle)), ""};
}

SharedLibrary::~SharedLibrary() {
  ::dlclose(handle_);
}

void* SharedLibrary::symbol(const std::string& name) const {
  return ::dlsym(handle_, name.c_str());
}

}  // namespace tenet::jit
