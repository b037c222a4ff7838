#include "codegen/jit.h"

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "codegen/bounds_check.h"
#include "codegen/jit_cache.h"
#include "ir/bind.h"
#include "support/error.h"

#ifndef TENET_RUNTIME_DIR_DEFAULT
#define TENET_RUNTIME_DIR_DEFAULT "runtime"
#endif
#ifndef TENET_CXX_COMPILER_DEFAULT
#define TENET_CXX_COMPILER_DEFAULT "c++"
#endif
#ifndef TENET_BLAS_LIBRARY_DEFAULT
#define TENET_BLAS_LIBRARY_DEFAULT "/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0"
#endif

namespace tenet::codegen {

namespace fs = std::filesystem;
using detail::run_process;

/// A dlopen()ed library, closed when the last CompiledFunction using it goes.
struct LoadedLibrary {
  void* handle = nullptr;
  std::string library_path;
  std::string source_path;
  bool cache_hit = false;

  LoadedLibrary() = default;
  LoadedLibrary(const LoadedLibrary&) = delete;
  LoadedLibrary& operator=(const LoadedLibrary&) = delete;
  ~LoadedLibrary() {
    if (handle) ::dlclose(handle);
  }
};

std::vector<std::string> compiler_workaround_flags(const std::string& cxx) {
  const std::string version = detail::compiler_version(cxx);
  const bool gcc = version.find("Free Software Foundation") != std::string::npos &&
                   version.find("clang") == std::string::npos;
  // GCC 12 if-converts `out[i] = x[i] - c >= 0 ? y[i] : 0` over a short
  // constant extent (3 to 16) into wrong AVX2/AVX-512 code at -O3: elements
  // come out 0. Tests caught it in the margin loss's gradient.
  if (gcc) return {"-fno-tree-loop-if-convert"};
  return {};
}

std::vector<std::string> default_jit_flags() {
  // -Wl,-Bsymbolic: calls between the library's own functions bind inside the
  // library, so an entry point named like a symbol the process already has
  // (libc's `step`, say) still calls its own code. -fno-math-errno: generated
  // code never reads errno, and without it sqrt does not vectorise.
  return {"-O3",       "-march=native",     "-fopenmp",
          "-fwrapv",   "-ffp-contract=off", "-fno-math-errno",
          "-fPIC",     "-shared",           "-Wl,-Bsymbolic",
          "-std=c++17"};
}

std::string runtime_dir() {
  const char* env = std::getenv("TENET_RUNTIME_DIR");
  return env && *env ? env : TENET_RUNTIME_DIR_DEFAULT;
}

std::string default_jit_compiler() {
  const char* env = std::getenv("TENET_CXX");
  return env && *env ? env : TENET_CXX_COMPILER_DEFAULT;
}

std::string blas_library() {
  const char* env = std::getenv("TENET_BLAS_LIBRARY");
  return env && *env ? env : TENET_BLAS_LIBRARY_DEFAULT;
}

namespace {

void check_layouts(const ir::Function& fn) {
  auto row_major = [](const ir::Value& v) {
    for (size_t d = 0; d < v.layout.size(); ++d)
      if (v.layout[d] != int(d)) return false;
    return true;
  };
  for (const auto* list : {&fn.inputs, &fn.outputs})
    for (const auto& v : *list)
      TENET_ASSERT(row_major(*v), "the JIT passes tensors row-major, but "
                                      << v->name << " of " << fn.name << " has a layout");
}

/// Compiles `source_path` into `library_path` unless the cache has it already.
/// Returns true on a cache hit.
bool build_library(const std::string& dir, const CppUnit& unit, const std::string& library_path,
                   const std::vector<std::string>& command_prefix,
                   const std::vector<std::string>& link_flags, const JitOptions& options) {
  const std::string source_path = dir + "/" + unit.source_name;
  std::error_code ec;
  // A library is only ever renamed into place complete; its source beside it
  // guards against a (very unlikely) hash collision.
  if (fs::exists(library_path, ec) && detail::read_text_file(source_path) == unit.source) {
    if (options.verbose) std::cerr << "[tenet jit] cache hit: " << library_path << "\n";
    return true;
  }
  fs::create_directories(dir, ec);
  if (ec)
    throw BindError("cannot create the JIT cache folder '" + dir + "' (" + ec.message() +
                    "); set TENET_CACHE_DIR to a writable folder");
  detail::write_file_atomically(dir + "/" + unit.header_name, unit.header);
  detail::write_file_atomically(source_path, unit.source);

  const std::string temporary = detail::temporary_name(library_path);
  std::vector<std::string> argv = command_prefix;
  argv.insert(argv.end(), {"-o", temporary, source_path});
  argv.insert(argv.end(), link_flags.begin(), link_flags.end());
  const auto start = std::chrono::steady_clock::now();
  detail::ProcessResult r = run_process(argv);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string command = detail::command_line(argv);
  detail::write_file_atomically(dir + "/build.log", "$ " + command + "\n" + r.output);
  if (options.verbose)
    std::cerr << "[tenet jit] " << command << "  (" << seconds << " s)\n" << r.output;
  if (r.exit_code != 0) {
    fs::remove(temporary, ec);
    std::string output = r.output.size() > 20000 ? r.output.substr(0, 20000) + "\n[...]" : r.output;
    throw InternalError("the C++ compiler failed (exit status " + std::to_string(r.exit_code) +
                        ") on generated code " + source_path + "\ncommand: " + command + "\n" +
                        output);
  }
  fs::rename(temporary, library_path, ec);
  if (ec) throw InternalError("cannot move the compiled library to '" + library_path + "'");
  return false;
}

/// What a unit calling tenet::gemm needs: the backend macro before the
/// source, the library (and where to find it at run time) after it.
struct GemmBuild {
  std::vector<std::string> compile_flags, link_flags;
};

GemmBuild gemm_build(const CppUnit& unit) {
  if (!unit.uses_gemm) return {};
  const std::string library = blas_library();
  if (library == "none") return {};  // tenet_gemm.h's own loops
  std::error_code ec;
  if (!fs::is_regular_file(library, ec))
    throw BindError("the generated code calls a GEMM library, but '" + library +
                    "' does not exist. Install OpenBLAS (Debian: libopenblas0-openmp; "
                    "bash scripts/setup.sh does), set TENET_BLAS_LIBRARY to another CBLAS "
                    "shared library, or set TENET_BLAS_LIBRARY=none to use plain loops");
  const std::string dir = fs::path(library).parent_path().string();
  return {{"-DTENET_GEMM_CBLAS"}, {library, "-Wl,-rpath," + dir}};
}

template <typename T>
T lookup(void* handle, const std::string& symbol, const std::string& path) {
  void* p = ::dlsym(handle, symbol.c_str());
  TENET_ASSERT(p != nullptr, "symbol " << symbol << " is missing from " << path);
  return reinterpret_cast<T>(p);
}

}  // namespace

std::vector<CompiledFunction> jit_compile_together(const ir::Module& m,
                                                   const std::vector<std::string>& functions,
                                                   const JitOptions& options) {
  TENET_ASSERT(!functions.empty(), "jit_compile_together: no function named");
  for (const auto& name : functions) {
    const ir::Function* f = m.find(name);
    TENET_ASSERT(f != nullptr, "jit_compile: no function named '" << name << "' in the module");
    check_layouts(*f);
  }
  const CppUnit unit = emit_cpp(m, functions, options.cpp);
  const std::string cxx = options.cxx.empty() ? default_jit_compiler() : options.cxx;
  std::vector<std::string> flags = options.flags.empty() ? default_jit_flags() : options.flags;
  const std::vector<std::string> workarounds = compiler_workaround_flags(cxx);
  flags.insert(flags.end(), workarounds.begin(), workarounds.end());
  const std::string runtime = runtime_dir();

  detail::Fnv1a key;
  key.add(unit.source);
  key.add(unit.header);
  key.add(detail::folder_contents(runtime));
  const GemmBuild gemm = gemm_build(unit);
  for (const auto& f : gemm.compile_flags) key.add(f);
  for (const auto& f : gemm.link_flags) key.add(f);
  key.add(cxx);
  key.add(detail::compiler_version(cxx));
  bool native = false;
  for (const auto& f : flags) {
    key.add(f);
    native = native || f.find("native") != std::string::npos;
  }
  if (native) key.add(detail::host_cpu_identity());

  const std::string cache_dir =
      options.cache_dir.empty() ? detail::default_cache_dir() : options.cache_dir;
  const std::string dir = cache_dir + "/" + key.hex();
  const std::string unit_name = unit.source_name.substr(0, unit.source_name.size() - 4);
  auto library = std::make_shared<LoadedLibrary>();
  library->library_path = dir + "/lib" + unit_name + ".so";
  library->source_path = dir + "/" + unit.source_name;

  std::vector<std::string> command{cxx};
  command.insert(command.end(), flags.begin(), flags.end());
  command.insert(command.end(), gemm.compile_flags.begin(), gemm.compile_flags.end());
  command.push_back("-I" + runtime);
  library->cache_hit =
      build_library(dir, unit, library->library_path, command, gemm.link_flags, options);

  // RTLD_NODELETE: unloading the library could unload libgomp with it while
  // OpenMP's idle worker threads still run inside it (a crash at exit).
  library->handle = ::dlopen(library->library_path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!library->handle) {
    const char* why = ::dlerror();
    throw InternalError("cannot load " + library->library_path + ": " + (why ? why : "?"));
  }

  std::vector<CompiledFunction> out;
  for (const auto& name : functions) {
    const ir::Function& f = *m.find(name);
    const std::string symbol = c_symbol(f);
    using Signature = const char* (*)();
    const std::string signature =
        lookup<Signature>(library->handle, symbol + "__signature", library->library_path)();
    TENET_ASSERT(signature == abi_signature(f),
                 "library " << library->library_path << " has the ABI '" << signature
                            << "', expected '" << abi_signature(f) << "'");
    CompiledFunction cf;
    cf.library_ = library;
    cf.fn_ = std::make_shared<const ir::Function>(f.clone());
    cf.packed_ = lookup<CompiledFunction::Packed>(library->handle, symbol + "__packed",
                                                  library->library_path);
    cf.packed_workspace_bytes_ = lookup<CompiledFunction::PackedWorkspaceBytes>(
        library->handle, symbol + "__packed_workspace_bytes", library->library_path);
    cf.packed_with_workspace_ = lookup<CompiledFunction::PackedWithWorkspace>(
        library->handle, symbol + "__packed_with_workspace", library->library_path);
    out.push_back(std::move(cf));
  }
  return out;
}

CompiledFunction jit_compile(const ir::Module& m, const std::string& function,
                             const JitOptions& options) {
  return jit_compile_together(m, {function}, options).front();
}

bool CompiledFunction::cache_hit() const {
  return library_->cache_hit;
}
const std::string& CompiledFunction::library_path() const {
  return library_->library_path;
}
const std::string& CompiledFunction::source_path() const {
  return library_->source_path;
}

std::vector<Tensor> CompiledFunction::run(const std::vector<Tensor>& inputs,
                                          const ir::SizeBindings& given) const {
  const ir::Function& fn = *fn_;
  const ir::SizeBindings sizes = ir::bind_sizes(fn, inputs, given);
  detail::check_reads_in_bounds(fn, sizes);
  std::vector<int64_t> size_values;
  for (const auto& s : fn.size_params) {
    auto it = sizes.find(s);
    size_values.push_back(it == sizes.end() ? 0 : it->second);  // 0: a parameter nothing uses
  }
  std::vector<Tensor> outputs;
  std::vector<void*> buffers;
  for (const Tensor& t : inputs) buffers.push_back(const_cast<void*>(t.raw()));
  for (const auto& v : fn.outputs) {
    outputs.push_back(ir::allocate(*v, sizes));
    buffers.push_back(outputs.back().raw());
  }
  const int status = packed_(size_values.data(), buffers.data());
  if (status == 1) throw BindError("a size parameter of " + fn.name + " is negative");
  if (status == 2) {
    // Its workspace: more than 64-bit byte sizes hold, or than malloc gives.
    std::string values;
    for (const auto& [name, value] : sizes)
      values += (values.empty() ? "" : ", ") + name + " = " + std::to_string(value);
    throw BindError("cannot allocate the workspace of '" + fn.name + "'" +
                    (values.empty() ? "" : " for " + values));
  }
  TENET_ASSERT(status == 0, fn.name << "__packed returned " << status);
  return outputs;
}

}  // namespace tenet::codegen
