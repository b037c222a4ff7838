// NVRTC through dlopen (nvrtc.h): the few entry points Tenet calls, with
// their C signatures (a stable ABI: nvrtcResult is an int, nvrtcProgram an
// opaque pointer), so that no CUDA header is needed to build Tenet.
#include "cuda/nvrtc.h"

#include <dlfcn.h>

#include <cstdlib>
#include <regex>
#include <sstream>

#include "jit/jit.h"
#include "support/error.h"

namespace tenet::cuda {

namespace {

using Program = void*;
struct Nvrtc {
  void* handle = nullptr;
  std::string error;
  int (*create)(Program*, const char*, const char*, int, const char* const*,
                const char* const*) = nullptr;
  int (*compile)(Program, int, const char* const*) = nullptr;
  int (*log_size)(Program, size_t*) = nullptr;
  int (*log)(Program, char*) = nullptr;
  int (*cubin_size)(Program, size_t*) = nullptr;
  int (*cubin)(Program, char*) = nullptr;
  int (*destroy)(Program*) = nullptr;
  const char* (*error_string)(int) = nullptr;
};

std::string cuda_home() {
  const char* env = std::getenv("CUDA_HOME");
  return env && *env ? env : "/usr/local/cuda";
}

template <typename F>
void bind(const Nvrtc& n, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(n.handle, name));
  if (!f) throw BindError(std::string("NVRTC has no ") + name);
}

const Nvrtc& nvrtc() {
  static const Nvrtc lib = [] {
    Nvrtc n;
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("TENET_NVRTC_LIBRARY"); env && *env)
      candidates.push_back(env);
    for (const char* so : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) {
      candidates.push_back(so);
      candidates.push_back(cuda_home() + "/lib64/" + so);
    }
    for (const std::string& c : candidates)
      if ((n.handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    if (!n.handle) {
      n.error =
          "NVRTC (libnvrtc, part of the CUDA toolkit) is not installed here; install the CUDA "
          "toolkit, or set TENET_NVRTC_LIBRARY or CUDA_HOME";
      return n;
    }
    try {
      bind(n, n.create, "nvrtcCreateProgram");
      bind(n, n.compile, "nvrtcCompileProgram");
      bind(n, n.log_size, "nvrtcGetProgramLogSize");
      bind(n, n.log, "nvrtcGetProgramLog");
      bind(n, n.cubin_size, "nvrtcGetCUBINSize");
      bind(n, n.cubin, "nvrtcGetCUBIN");
      bind(n, n.destroy, "nvrtcDestroyProgram");
      bind(n, n.error_string, "nvrtcGetErrorString");
    } catch (const BindError& e) {
      n.error = e.what();
    }
    return n;
  }();
  return lib;
}

int64_t number(const std::smatch& m, size_t i) {
  return m[i].matched ? std::stoll(m[i].str()) : 0;
}

}  // namespace

bool nvrtc_available(std::string* why) {
  const Nvrtc& n = nvrtc();
  if (why) *why = n.error;
  return n.error.empty();
}

std::vector<KernelResources> parse_ptxas_log(const std::string& log) {
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers(?:.*?(\d+) bytes smem)?)");
  std::vector<KernelResources> out;
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_search(line, m, entry)) {
      out.push_back(KernelResources{m[1].str()});
    } else if (!out.empty() && std::regex_search(line, m, frame)) {
      out.back().stack_bytes = number(m, 1);
      out.back().spill_store_bytes = number(m, 2);
      out.back().spill_load_bytes = number(m, 3);
    } else if (!out.empty() && std::regex_search(line, m, used)) {
      out.back().registers = int(number(m, 1));
      out.back().shared_bytes = number(m, 2);
    }
  }
  return out;
}

DeviceCode compile_kernels(const std::string& source, const std::string& name,
                           const std::string& arch) {
  const Nvrtc& n = nvrtc();
  if (!n.error.empty()) throw BindError(n.error);
  Program program = nullptr;
  if (int rc = n.create(&program, source.c_str(), name.c_str(), 0, nullptr, nullptr); rc != 0)
    throw BindError(std::string("NVRTC cannot create a program: ") + n.error_string(rc));
  const std::string arch_option = "-arch=" + arch;
  const std::string runtime = "-I" + jit::runtime_dir();
  const std::string cccl = "-I" + cuda_home() + "/include/cccl";
  const std::string include = "-I" + cuda_home() + "/include";
  const char* options[] = {arch_option.c_str(), "-std=c++17", "--fmad=false",  "-Xptxas=-v",
                           runtime.c_str(),     cccl.c_str(), include.c_str(), "-default-device"};
  const int rc = n.compile(program, int(std::size(options)), options);
  DeviceCode code;
  code.arch = arch;
  size_t size = 0;
  n.log_size(program, &size);
  code.log.resize(size);
  if (size) n.log(program, code.log.data());
  while (!code.log.empty() && code.log.back() == '\0') code.log.pop_back();
  if (rc == 0) {
    n.cubin_size(program, &size);
    code.cubin.resize(size);
    if (size) n.cubin(program, code.cubin.data());
  }
  n.destroy(&program);
  if (rc != 0)
    throw BindError("NVRTC failed to compile the kernels of " + name + " for " + arch + " (" +
                    n.error_string(rc) + "):\n" + code.log);
  code.kernels = parse_ptxas_log(code.log);
  return code;
}

}  // namespace tenet::cuda
