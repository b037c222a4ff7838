#include "codegen/jit.h"

#include "codegen/c_text.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "lower/bounds_check.h"
#include "codegen/jit_cache.h"
#include "codegen/trust.h"
#include "ir/bind.h"
#include "support/error.h"
#include "support/temp_files.h"

#ifndef TENET_RUNTIME_DIR_DEFAULT
#define TENET_RUNTIME_DIR_DEFAULT "runtime"
#endif
#ifndef TENET_CXX_COMPILER_DEFAULT
#define TENET_CXX_COMPILER_DEFAULT "c++"
#endif
#ifndef TENET_BLAS_LIBRARY_DEFAULT
#define TENET_BLAS_LIBRARY_DEFAULT "/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0"
#endif
#ifndef TENET_DNNL_LIBRARY_DEFAULT
#define TENET_DNNL_LIBRARY_DEFAULT "/usr/lib/x86_64-linux-gnu/libdnnl.so.2"
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

/// Each runtime header the unit includes must be in the runtime folder: a
/// folder named by mistake is the user's setting to fix, not a compiler error
/// in generated code.
void check_runtime_headers(const CppUnit& unit, const std::string& runtime) {
  const char* env = std::getenv("TENET_RUNTIME_DIR");
  const std::string setting = env && *env ? "TENET_RUNTIME_DIR" : "the folder Tenet was built with";
  for (const std::string* text : {&unit.source, &unit.header}) {
    for (size_t at = text->find("#include \""); at != std::string::npos;
         at = text->find("#include \"", at + 1)) {
      const size_t start = at + 10, end = text->find('"', start);
      const std::string name = text->substr(start, end - start);
      std::error_code ec;
      if (end == std::string::npos || name == unit.header_name ||
          !detail::is_runtime_header(name) || fs::is_regular_file(runtime + "/" + name, ec))
        continue;
      throw BindError("the runtime headers folder '" + runtime + "' (" + setting + ") has no " +
                      name + ", which generated code includes; set TENET_RUNTIME_DIR to the " +
                      "runtime/ folder of this Tenet (its Python package sets it to its own " +
                      "copy), or unset it");
    }
  }
}

std::string default_jit_compiler() {
  const char* env = std::getenv("TENET_CXX");
  return env && *env ? env : TENET_CXX_COMPILER_DEFAULT;
}

std::string blas_library() {
  const char* env = std::getenv("TENET_BLAS_LIBRARY");
  return env && *env ? env : TENET_BLAS_LIBRARY_DEFAULT;
}

std::string dnnl_library() {
  const char* env = std::getenv("TENET_DNNL_LIBRARY");
  if (env && *env) return env;
  std::error_code ec;
  return fs::is_regular_file(TENET_DNNL_LIBRARY_DEFAULT, ec) ? TENET_DNNL_LIBRARY_DEFAULT : "none";
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

/// How to run the compiler: `prefix` (compiler, flags, -I) before the output
/// and source, `link_flags` after them; `origin` says where the compiler came
/// from, for messages.
struct CompileCommand {
  std::vector<std::string> prefix, link_flags;
  std::string origin;
};

/// A refusal to use a cache folder or file that another user could have written.
BindError untrusted_cache(const std::string& what, const std::string& why) {
  return BindError("refusing to load code from " + what + ": " + why +
                   ", so another user could have put a library there that Tenet would run. "
                   "Set TENET_CACHE_DIR to a folder only you can write (Tenet creates it with "
                   "mode 0700), or remove the others' write permission (chmod go-w) or the "
                   "foreign files");
}

/// Creates the cache folder and the entry `dir` in it (mode 0700) unless they
/// exist, and checks that no other user could have written them.
void prepare_cache_entry(const std::string& cache_dir, const std::string& dir) {
  detail::create_private_directories(cache_dir, "TENET_CACHE_DIR");
  if (std::string why = detail::untrusted_reason(cache_dir, detail::Owners::Me); !why.empty())
    throw untrusted_cache("the JIT cache folder", why);
  if (::mkdir(dir.c_str(), 0700) == 0)
    ::chmod(dir.c_str(), 0700);  // whatever the umask
  else if (errno != EEXIST)
    throw BindError("cannot create the JIT cache folder '" + dir + "' (" + std::strerror(errno) +
                    "); set TENET_CACHE_DIR to a writable folder");
  if (std::string why = detail::untrusted_entry_reason(dir); !why.empty())
    throw untrusted_cache("the JIT cache entry", why);
}

/// "TENET_BLAS_LIBRARY=/usr/lib/.../libopenblas.so.0, TENET_DNNL_LIBRARY=none".
std::string gemm_settings() {
  return "TENET_BLAS_LIBRARY=" + blas_library() + ", TENET_DNNL_LIBRARY=" + dnnl_library();
}

/// The compiler's TMPDIR while it builds an entry: a folder of this process
/// in the entry's folder, removed afterwards, so that a compile killed with
/// Tenet leaves its temporaries there (removed by the entry's next build,
/// support/temp_files.h) and nothing in the user's $TMPDIR.
class CompilerTempDir {
 public:
  explicit CompilerTempDir(const std::string& dir)
      : path_(detail::temporary_name(dir + "/cc-tmp")) {
    std::error_code ec;
    if (!fs::create_directory(path_, ec)) path_.clear();  // then the compiler's own choice
  }
  CompilerTempDir(const CompilerTempDir&) = delete;
  CompilerTempDir& operator=(const CompilerTempDir&) = delete;
  ~CompilerTempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Why the compiler cannot build a trivial C++17 shared library with the
/// command Tenet uses ("" when it can): then a failure on generated code is
/// the compiler's or its flags', not Tenet's.
std::string probe_compiler(const std::string& dir, const CompileCommand& command) {
  const std::string source = detail::temporary_name(dir + "/probe.cpp");
  const std::string library = detail::temporary_name(dir + "/libprobe.so");
  detail::write_file_atomically(source, "extern \"C\" int tenet_probe(void) { return 17; }\n");
  std::vector<std::string> argv = command.prefix;
  argv.insert(argv.end(), {"-o", library, "-x", "c++", source, "-x", "none"});
  argv.insert(argv.end(), command.link_flags.begin(), command.link_flags.end());
  const CompilerTempDir tmp(dir);
  detail::ProcessResult r = run_process(argv, tmp.path());
  std::error_code ec;
  const bool built = r.exit_code == 0 && fs::exists(library, ec);
  fs::remove(source, ec);
  fs::remove(library, ec);
  if (built) return "";
  return "$ " + detail::command_line(argv) + "\n" + r.output;
}

/// A hash of a file's bytes, recorded beside each library built.
std::string file_checksum(const std::string& path) {
  detail::Fnv1a hash;
  hash.add(detail::read_text_file(path));
  return hash.hex() + "\n";
}

/// Compiles `source_path` into `library_path` unless the cache has it already
/// (and `rebuild` is false). Returns true on a cache hit.
bool build_library(const std::string& dir, const CppUnit& unit, const std::string& library_path,
                   const CompileCommand& compile, bool rebuild, const JitOptions& options) {
  const std::string source_path = dir + "/" + unit.source_name;
  std::error_code ec;
  if (std::string why = detail::untrusted_entry_reason(library_path); !why.empty())
    throw untrusted_cache("the JIT cache", why);
  // A library is only ever renamed into place complete; its source beside it
  // guards against a (very unlikely) hash collision, its checksum against a
  // file damaged since (truncated by a full disk: dlopen would die of SIGBUS).
  const std::string checksum_path = library_path + ".fnv1a";
  if (!rebuild && fs::exists(library_path, ec) &&
      detail::read_text_file(source_path) == unit.source) {
    if (detail::read_text_file(checksum_path) == file_checksum(library_path)) {
      if (options.verbose) std::cerr << "[tenet jit] cache hit: " << library_path << "\n";
      return true;
    }
    std::cerr << "warning: the cached library " << library_path
              << " is damaged (its checksum is not the one recorded when it was built); "
                 "building it again\n";
  }
  // Files a killed compile left behind.
  for (const std::string& name :
       {unit.header_name, unit.source_name, fs::path(library_path).filename().string(),
        fs::path(library_path).filename().string() + ".fnv1a", std::string("build.log"),
        std::string("probe.cpp"), std::string("libprobe.so"), std::string("cc-tmp")})
    remove_stale_temporaries(dir + "/" + name);
  try {
    detail::write_file_atomically(dir + "/" + unit.header_name, unit.header);
    detail::write_file_atomically(source_path, unit.source);
  } catch (const BindError& e) {
    throw BindError(std::string(e.what()) + "; set TENET_CACHE_DIR to a writable folder");
  }

  const std::string temporary = detail::temporary_name(library_path);
  std::vector<std::string> argv = compile.prefix;
  argv.insert(argv.end(), {"-o", temporary, source_path});
  argv.insert(argv.end(), compile.link_flags.begin(), compile.link_flags.end());
  const auto start = std::chrono::steady_clock::now();
  detail::ProcessResult r = [&] {
    const CompilerTempDir tmp(dir);
    return run_process(argv, tmp.path());
  }();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string command = detail::command_line(argv);
  detail::write_file_atomically(dir + "/build.log", "$ " + command + "\n" + r.output);
  if (options.verbose)
    std::cerr << "[tenet jit] " << command << "  (" << seconds << " s)\n" << r.output;
  const std::string& cxx = compile.prefix.front();
  const std::string compiler = "the C++ compiler '" + cxx + "' (" + compile.origin + ")";
  std::string output = r.output.size() > 20000 ? r.output.substr(0, 20000) + "\n[...]" : r.output;
  if (r.exit_code != 0) {
    fs::remove(temporary, ec);
    if (r.killed_by != 0)
      throw BindError(compiler + " was killed by signal " + std::to_string(r.killed_by) + " (" +
                      strsignal(r.killed_by) + ") while compiling " + source_path +
                      " (out of memory?)\ncommand: " + command + "\n" + output);
    if (std::string why = probe_compiler(dir, compile); !why.empty()) {
      if (!compile.link_flags.empty() &&
          probe_compiler(dir, CompileCommand{compile.prefix, {}, compile.origin}).empty())
        throw BindError("the GEMM libraries generated code links (" + gemm_settings() +
                        ") cannot be linked into a shared library by " + compiler +
                        "; set TENET_BLAS_LIBRARY and TENET_DNNL_LIBRARY to working shared " +
                        "libraries, or to none\n" + why);
      throw BindError(compiler + " cannot build even a one-line C++17 shared library with " +
                      "the flags Tenet uses; set TENET_CXX to a C++17 compiler such as g++ " +
                      "(and check JitOptions::flags)\n" + why);
    }
    throw InternalError("the C++ compiler failed (exit status " + std::to_string(r.exit_code) +
                        ") on generated code " + source_path + "\ncommand: " + command + "\n" +
                        output);
  }
  if (!fs::is_regular_file(temporary, ec))
    throw BindError(compiler + " exited with status 0 but wrote no library " + temporary +
                    ": is it a C++ compiler? Set TENET_CXX to a C++17 compiler such as g++\n" +
                    "command: " + command + "\n" + output);
  detail::write_file_atomically(checksum_path, file_checksum(temporary));
  fs::rename(temporary, library_path, ec);
  if (ec)
    throw BindError("cannot move the compiled library to '" + library_path + "' (" + ec.message() +
                    "); set TENET_CACHE_DIR to a writable folder");
  return false;
}

/// What a unit calling tenet::gemm needs: the backend macro before the
/// source, the library (and where to find it at run time) after it.
struct GemmBuild {
  std::vector<std::string> compile_flags, link_flags;
};

/// A library the generated code links, checked: it exists and only its
/// owner or root can change it.
void check_library(const std::string& what, const std::string& library, const std::string& variable,
                   const std::string& missing_advice) {
  std::error_code ec;
  if (!fs::is_regular_file(library, ec))
    throw BindError("the generated code calls a GEMM library, but '" + library +
                    "' does not exist. " + missing_advice);
  if (std::string why = detail::untrusted_reason(library, detail::Owners::MeOrRoot); !why.empty())
    throw BindError("refusing to link the " + what + " '" + library + "' (" + variable +
                    "): " + why + ", so another user could have changed the code it holds. Use a " +
                    "library only you or root can change");
  char magic[4] = {};
  std::ifstream in(library, std::ios::binary);
  if (!in.read(magic, 4) || std::memcmp(magic,
                                        "\x7f"
                                        "ELF",
                                        4) != 0)
    throw BindError("the " + what + " '" + library + "' (" + variable +
                    ") is not a shared library (no ELF header). " + missing_advice);
}

GemmBuild gemm_build(const CppUnit& unit) {
  if (!unit.uses_gemm) return {};
  GemmBuild build;
  // float32 through oneDNN where it is installed, float64 (and float32
  // without oneDNN) through the CBLAS library (runtime/tenet_gemm.h).
  const std::string dnnl = dnnl_library();
  if (dnnl != "none") {
    check_library("oneDNN library", dnnl, "TENET_DNNL_LIBRARY",
                  "Install oneDNN (Debian: libdnnl-dev; bash scripts/setup.sh does), or set "
                  "TENET_DNNL_LIBRARY=none to use the CBLAS library alone");
    build.compile_flags.push_back("-DTENET_GEMM_DNNL");
    build.link_flags.push_back(dnnl);
    build.link_flags.push_back("-Wl,-rpath," + fs::path(dnnl).parent_path().string());
  }
  const std::string library = blas_library();
  if (library == "none") return build;  // tenet_gemm.h's own loops for the rest
  check_library("BLAS library", library, "TENET_BLAS_LIBRARY",
                "Install OpenBLAS (Debian: libopenblas0-openmp; bash scripts/setup.sh does), set "
                "TENET_BLAS_LIBRARY to another CBLAS shared library, or set "
                "TENET_BLAS_LIBRARY=none to use plain loops");
  build.compile_flags.push_back("-DTENET_GEMM_CBLAS");
  build.link_flags.push_back(library);
  build.link_flags.push_back("-Wl,-rpath," + fs::path(library).parent_path().string());
  return build;
}

template <typename T>
T lookup(void* handle, const std::string& symbol) {
  return reinterpret_cast<T>(::dlsym(handle, symbol.c_str()));
}

/// What is wrong with a loaded library for these functions: a missing entry
/// point or another ABI; "" when nothing is.
std::string library_problem(void* handle, const ir::Module& m,
                            const std::vector<std::string>& functions) {
  for (const auto& name : functions) {
    const ir::Function& f = *m.find(name);
    const std::string symbol = c_symbol(f);
    for (const char* suffix :
         {"__signature", "__packed", "__packed_workspace_bytes", "__packed_with_workspace"})
      if (!::dlsym(handle, (symbol + suffix).c_str()))
        return "the symbol " + symbol + suffix + " is missing";
    using Signature = const char* (*)();
    const std::string signature = lookup<Signature>(handle, symbol + "__signature")();
    if (signature != abi_signature(f))
      return "it has the ABI '" + signature + "', expected '" + abi_signature(f) + "'";
  }
  return "";
}

/// dlopen()s a library; "" and the handle, or why it failed. `alias`: open it
/// through a hard link of that name (then removed), so that a damaged
/// library loaded earlier under `path` is not returned again.
std::pair<void*, std::string> open_library(const std::string& path, const std::string& alias) {
  std::string opened = path;
  if (!alias.empty() && ::link(path.c_str(), alias.c_str()) == 0) opened = alias;
  // RTLD_NODELETE: unloading the library could unload libgomp with it while
  // OpenMP's idle worker threads still run inside it (a crash at exit).
  void* handle = ::dlopen(opened.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  const char* why = handle ? nullptr : ::dlerror();
  if (opened != path) ::unlink(opened.c_str());
  return {handle, handle ? "" : (why ? why : "dlopen failed")};
}

}  // namespace

std::vector<CompiledFunction> jit_compile_unit(const CppUnit& unit, const ir::Module& m,
                                               const std::vector<std::string>& functions,
                                               const JitOptions& options) {
  TENET_ASSERT(!functions.empty(), "jit_compile_unit: no function named");
  for (const auto& name : functions) {
    const ir::Function* f = m.find(name);
    TENET_ASSERT(f != nullptr, "jit_compile: no function named '" << name << "' in the module");
    check_layouts(*f);
  }
  const char* env_cxx = std::getenv("TENET_CXX");
  const std::string origin = !options.cxx.empty()  ? "JitOptions::cxx"
                             : env_cxx && *env_cxx ? "TENET_CXX"
                                                   : "the compiler Tenet was built with";
  const std::string cxx =
      detail::resolve_compiler(options.cxx.empty() ? default_jit_compiler() : options.cxx, origin);
  const std::string version = detail::compiler_version(cxx, origin);
  std::vector<std::string> flags = options.flags.empty() ? default_jit_flags() : options.flags;
  const std::vector<std::string> workarounds = compiler_workaround_flags(cxx);
  flags.insert(flags.end(), workarounds.begin(), workarounds.end());
  const std::string runtime = runtime_dir();
  check_runtime_headers(unit, runtime);

  detail::Fnv1a key;
  key.add(unit.source);
  key.add(unit.header);
  key.add(detail::folder_contents(runtime, "TENET_RUNTIME_DIR"));
  const GemmBuild gemm = gemm_build(unit);
  for (const auto& f : gemm.compile_flags) key.add(f);
  for (const auto& f : gemm.link_flags) key.add(f);
  key.add(cxx);
  key.add(version);
  bool native = false;
  for (const auto& f : flags) {
    key.add(f);
    native = native || f.find("native") != std::string::npos;
  }
  if (native) key.add(detail::host_cpu_identity());

  const std::string cache_dir =
      options.cache_dir.empty() ? detail::default_cache_dir() : options.cache_dir;
  const std::string dir = cache_dir + "/" + key.hex();
  prepare_cache_entry(cache_dir, dir);
  const std::string unit_name = unit.source_name.substr(0, unit.source_name.size() - 4);
  auto library = std::make_shared<LoadedLibrary>();
  library->library_path = dir + "/lib" + unit_name + ".so";
  library->source_path = dir + "/" + unit.source_name;

  CompileCommand compile{{cxx}, gemm.link_flags, origin};
  compile.prefix.insert(compile.prefix.end(), flags.begin(), flags.end());
  compile.prefix.insert(compile.prefix.end(), gemm.compile_flags.begin(), gemm.compile_flags.end());
  compile.prefix.push_back("-I" + runtime);
  // A cached library that does not load, or lacks what it must have (a
  // truncated or damaged file), is discarded and built again, once.
  for (bool rebuild : {false, true}) {
    library->cache_hit = build_library(dir, unit, library->library_path, compile, rebuild, options);
    auto [handle, problem] = open_library(
        library->library_path, rebuild ? detail::temporary_name(library->library_path) : "");
    if (handle) problem = library_problem(handle, m, functions);
    if (problem.empty()) {
      library->handle = handle;
      break;
    }
    if (!library->cache_hit && !gemm.link_flags.empty() &&
        (problem.find("undefined symbol: cblas_") != std::string::npos ||
         problem.find("undefined symbol: dnnl_") != std::string::npos))
      throw BindError("the library generated code was built into does not load: " + problem +
                      "; a GEMM library it links (" + gemm_settings() +
                      ") lacks the functions it calls. Set TENET_BLAS_LIBRARY to a CBLAS " +
                      "shared library such as OpenBLAS and TENET_DNNL_LIBRARY to oneDNN's, or " +
                      "either to none");
    if (!library->cache_hit)
      throw InternalError("cannot load " + library->library_path + ", just built: " + problem);
    std::cerr << "warning: the cached library " << library->library_path << " is damaged ("
              << problem << "); building it again\n";
  }

  std::vector<CompiledFunction> out;
  for (const auto& name : functions) {
    const ir::Function& f = *m.find(name);
    const std::string symbol = c_symbol(f);
    CompiledFunction cf;
    cf.library_ = library;
    cf.fn_ = std::make_shared<const ir::Function>(f.clone());
    cf.packed_ = lookup<CompiledFunction::Packed>(library->handle, symbol + "__packed");
    cf.packed_workspace_bytes_ = lookup<CompiledFunction::PackedWorkspaceBytes>(
        library->handle, symbol + "__packed_workspace_bytes");
    cf.packed_with_workspace_ = lookup<CompiledFunction::PackedWithWorkspace>(
        library->handle, symbol + "__packed_with_workspace");
    cf.error_ = lookup<CompiledFunction::ErrorMessage>(library->handle, symbol + "__error");
    out.push_back(std::move(cf));
  }
  return out;
}

void CompiledFunction::fail(int status, const ir::SizeBindings& sizes) const {
  const ir::Function& fn = *fn_;
  if (status == 1) throw BindError("a size parameter of " + fn.name + " is negative");
  if (status == 2) {
    // Its workspace: more than 64-bit byte sizes hold, or than malloc gives.
    std::string values;
    for (const auto& [name, value] : sizes)
      values += (values.empty() ? "" : ", ") + name + " = " + std::to_string(value);
    throw BindError("cannot allocate the workspace of '" + fn.name + "'" +
                    (values.empty() ? "" : " for " + values));
  }
  if (status == 3 && error_) throw BindError(error_());
  TENET_UNREACHABLE(fn.name + "'s packed entry point returned " + std::to_string(status));
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
  lower::check_reads_in_bounds(fn, sizes);
  std::vector<int64_t> size_values;
  for (const auto& s : fn.size_params) {
    auto it = sizes.find(s);
    size_values.push_back(it == sizes.end() ? 0 : it->second);  // 0: a parameter nothing uses
  }
  std::vector<Tensor> outputs;
  std::vector<const void*> in;
  std::vector<void*> out;
  std::vector<size_t> bytes;
  for (const Tensor& t : inputs) in.push_back(t.raw());
  for (const auto& v : fn.outputs) {
    outputs.push_back(ir::allocate(*v, sizes));
    out.push_back(outputs.back().raw());
    bytes.push_back(outputs.back().nbytes());
  }
  std::vector<void*> buffers;
  pack(in.data(), out.data(), bytes, buffers);
  const int status = packed_(size_values.data(), buffers.data());
  if (status != 0) fail(status, sizes);
  return outputs;
}

void CompiledFunction::pack(const void* const* inputs, void* const* outputs,
                            const std::vector<size_t>& output_bytes,
                            std::vector<void*>& buffers) const {
  const ir::Function& fn = *fn_;
  buffers.clear();
  for (size_t k = 0; k < fn.inputs.size(); ++k)
    if (!detail::is_updated_input(fn, k)) buffers.push_back(const_cast<void*>(inputs[k]));
  for (size_t i = 0; i < fn.outputs.size(); ++i) {
    buffers.push_back(outputs[i]);
    const int k = fn.updated_input(i);
    if (k >= 0 && inputs[k] != outputs[i] && output_bytes[i] > 0)
      std::memcpy(outputs[i], inputs[k], output_bytes[i]);
  }
}

}  // namespace tenet::codegen
