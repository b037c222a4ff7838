#include "jit/jit.h"

#include "codegen/c_text.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "ir/bind.h"
#include "jit/cache.h"
#include "jit/shared_library.h"
#include "jit/trust.h"
#include "lower/bounds_check.h"
#include "support/checked.h"
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

namespace tenet::jit {

namespace fs = std::filesystem;
using detail::run_process;

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
void check_runtime_headers(const codegen::CppUnit& unit, const std::string& runtime) {
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

bool profile_requested() {
  const char* env = std::getenv("TENET_PROFILE");
  return env && *env && std::string(env) != "0";
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

/// When the compiler failed on generated code: a BindError if it cannot
/// build even a trivial library with these flags (then the compiler or its
/// settings are to blame, or the GEMM libraries it links); else nothing.
void explain_compiler_failure(const std::string& dir, const CompileCommand& compile,
                              const std::string& compiler) {
  const std::string why = probe_compiler(dir, compile);
  if (why.empty()) return;
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

/// Runs the compiler on the source in `entry` into a temporary library, and
/// returns it; the errors say whose fault a failure is (the generated code's,
/// the compiler's or its flags', the GEMM libraries').
std::string run_compiler(const CacheEntry& entry, const codegen::CppUnit& unit,
                         const std::string& library, const CompileCommand& compile,
                         const JitOptions& options) {
  const std::string source_path = entry.path(unit.source_name);
  const std::string temporary = entry.temporary(library);
  std::vector<std::string> argv = compile.prefix;
  argv.insert(argv.end(), {"-o", temporary, source_path});
  argv.insert(argv.end(), compile.link_flags.begin(), compile.link_flags.end());
  const auto start = std::chrono::steady_clock::now();
  detail::ProcessResult r = [&] {
    const CompilerTempDir tmp(entry.dir());
    return run_process(argv, tmp.path());
  }();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string command = detail::command_line(argv);
  detail::write_file_atomically(entry.path("build.log"), "$ " + command + "\n" + r.output);
  if (options.verbose)
    std::cerr << "[tenet jit] " << command << "  (" << seconds << " s)\n" << r.output;
  const std::string& cxx = compile.prefix.front();
  const std::string compiler = "the C++ compiler '" + cxx + "' (" + compile.origin + ")";
  std::string output = r.output.size() > 20000 ? r.output.substr(0, 20000) + "\n[...]" : r.output;
  std::error_code ec;
  if (r.exit_code != 0) {
    fs::remove(temporary, ec);
    if (r.killed_by != 0)
      throw BindError(compiler + " was killed by signal " + std::to_string(r.killed_by) + " (" +
                      strsignal(r.killed_by) + ") while compiling " + source_path +
                      " (out of memory?)\ncommand: " + command + "\n" + output);
    explain_compiler_failure(entry.dir(), compile, compiler);
    throw InternalError("the C++ compiler failed (exit status " + std::to_string(r.exit_code) +
                        ") on generated code " + source_path + "\ncommand: " + command + "\n" +
                        output);
  }
  if (!fs::is_regular_file(temporary, ec))
    throw BindError(compiler + " exited with status 0 but wrote no library " + temporary +
                    ": is it a C++ compiler? Set TENET_CXX to a C++17 compiler such as g++\n" +
                    "command: " + command + "\n" + output);
  return temporary;
}

/// Compiles the unit into the artefact `library` of `entry` unless the cache
/// has it already (and `rebuild` is false). Returns true on a cache hit.
bool build_library(const CacheEntry& entry, const codegen::CppUnit& unit,
                   const std::string& library, const CompileCommand& compile, bool rebuild,
                   const JitOptions& options) {
  const std::vector<CacheFile> sources = {{unit.header_name, unit.header},
                                          {unit.source_name, unit.source}};
  if (!rebuild && entry.holds(library, sources, options.verbose)) return true;
  entry.write_sources(sources, library, {"build.log", "probe.cpp", "libprobe.so", "cc-tmp"});
  entry.commit(run_compiler(entry, unit, library, compile, options), library);
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

GemmBuild gemm_build(const codegen::CppUnit& unit) {
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

/// What the CUDA target's host code needs: the toolkit's headers, the CUDA
/// runtime and cuBLAS (under $CUDA_HOME, else /usr/local/cuda).
GemmBuild cuda_build() {
  const char* env = std::getenv("CUDA_HOME");
  const std::string home = env && *env ? env : "/usr/local/cuda";
  GemmBuild build;
  build.compile_flags.push_back("-I" + home + "/include");
  for (const char* name : {"libcudart.so", "libcublas.so"}) {
    const std::string library = home + "/lib64/" + name;
    check_library("CUDA library", library, "CUDA_HOME",
                  "The cuda target needs the CUDA toolkit (its runtime and cuBLAS); set CUDA_HOME "
                  "to where it is installed");
    build.link_flags.push_back(library);
  }
  build.link_flags.push_back("-Wl,-rpath," + home + "/lib64");
  return build;
}

/// The compiler command for `unit` and its cache key (everything the
/// library depends on).
struct HostBuild {
  CompileCommand compile;
  GemmBuild gemm;
  detail::Fnv1a key;
};

HostBuild host_build(const codegen::CppUnit& unit, const JitOptions& options) {
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

  // Members one by one: GCC destroys a half-built aggregate twice when an
  // initialiser (gemm_build's BindError) throws.
  HostBuild b;
  b.gemm = gemm_build(unit);
  if (unit.uses_cuda) {  // the CUDA target's host code (runtime/tenet_cuda.h)
    const GemmBuild cuda = cuda_build();
    b.gemm.compile_flags.insert(b.gemm.compile_flags.end(), cuda.compile_flags.begin(),
                                cuda.compile_flags.end());
    b.gemm.link_flags.insert(b.gemm.link_flags.end(), cuda.link_flags.begin(),
                             cuda.link_flags.end());
  }
  b.compile.prefix = {cxx};
  b.compile.origin = origin;
  b.key.add(unit.source);
  b.key.add(unit.header);
  b.key.add(detail::folder_contents(runtime, "TENET_RUNTIME_DIR"));
  for (const auto& f : b.gemm.compile_flags) b.key.add(f);
  for (const auto& f : b.gemm.link_flags) b.key.add(f);
  b.key.add(cxx);
  b.key.add(version);
  bool native = false;
  for (const auto& f : flags) {
    b.key.add(f);
    native = native || f.find("native") != std::string::npos;
  }
  if (native) b.key.add(detail::host_cpu_identity());

  b.compile.link_flags = b.gemm.link_flags;
  b.compile.prefix.insert(b.compile.prefix.end(), flags.begin(), flags.end());
  b.compile.prefix.insert(b.compile.prefix.end(), b.gemm.compile_flags.begin(),
                          b.gemm.compile_flags.end());
  b.compile.prefix.push_back("-I" + runtime);
  return b;
}

/// Builds (or finds in the cache) and opens the library of `unit`, checked
/// to hold the entry points of `functions` of `m`. A cached library that
/// does not load, or lacks what it must have (a truncated or damaged file),
/// is discarded and built again, once.
std::shared_ptr<const LoadedUnit> build_and_open(const codegen::CppUnit& unit, const ir::Module& m,
                                                 const std::vector<std::string>& functions,
                                                 const JitOptions& options) {
  const HostBuild b = host_build(unit, options);
  const CacheEntry entry(options.cache_dir, b.key.hex());
  const std::string unit_name = unit.source_name.substr(0, unit.source_name.size() - 4);
  const std::string library = "lib" + unit_name + ".so";
  for (bool rebuild : {false, true}) {
    UnitFiles files{entry.path(library), entry.path(unit.source_name), false};
    files.cache_hit = build_library(entry, unit, library, b.compile, rebuild, options);
    const bool hit = files.cache_hit;
    auto [opened, problem] =
        SharedLibrary::open(files, rebuild ? entry.temporary(library) : std::string());
    for (size_t i = 0; opened && problem.empty() && i < functions.size(); ++i)
      problem = opened->abi_problem(*m.find(functions[i]));
    if (problem.empty()) return opened;
    if (!hit && !b.gemm.link_flags.empty() &&
        (problem.find("undefined symbol: cblas_") != std::string::npos ||
         problem.find("undefined symbol: dnnl_") != std::string::npos))
      throw BindError("the library generated code was built into does not load: " + problem +
                      "; a GEMM library it links (" + gemm_settings() +
                      ") lacks the functions it calls. Set TENET_BLAS_LIBRARY to a CBLAS " +
                      "shared library such as OpenBLAS and TENET_DNNL_LIBRARY to oneDNN's, or " +
                      "either to none");
    if (!hit)
      throw InternalError("cannot load " + entry.path(library) + ", just built: " + problem);
    std::cerr << "warning: the cached library " << entry.path(library) << " is damaged (" << problem
              << "); building it again\n";
  }
  TENET_UNREACHABLE("a library built again is loaded or an error");
}

}  // namespace

std::vector<CompiledFunction> jit_compile_unit(const codegen::CppUnit& unit, const ir::Module& m,
                                               const std::vector<std::string>& functions,
                                               const JitOptions& options) {
  TENET_ASSERT(!functions.empty(), "jit_compile_unit: no function named");
  for (const auto& name : functions) {
    const ir::Function* f = m.find(name);
    TENET_ASSERT(f != nullptr, "jit_compile: no function named '" << name << "' in the module");
    check_layouts(*f);
  }
  const std::shared_ptr<const LoadedUnit> loaded = build_and_open(unit, m, functions, options);
  std::vector<CompiledFunction> out;
  for (const auto& name : functions) out.emplace_back(loaded, *m.find(name));
  return out;
}

CompiledFunction::CompiledFunction(std::shared_ptr<const LoadedUnit> unit, const ir::Function& fn)
    : unit_(std::move(unit)),
      fn_(std::make_shared<const ir::Function>(fn.clone())),
      entry_(unit_->entry_points(fn)),
      updated_(fn.inputs.size(), false) {
  for (size_t i = 0; i < fn.outputs.size(); ++i) {
    updates_.push_back(fn.updated_input(i));
    if (updates_.back() >= 0) updated_[size_t(updates_.back())] = true;
  }
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
  if (status == 3 && entry_.error) throw BindError(entry_.error());
  if (status == 4 && entry_.error)  // a GPU target's device runtime failed
    throw BindError(fn.name + " failed on the device: " + entry_.error());
  TENET_UNREACHABLE(fn.name + "'s packed entry point returned " + std::to_string(status));
}

namespace {

/// The size parameters' values in `fn`'s order (0: a parameter nothing uses).
std::vector<int64_t> size_values_of(const ir::Function& fn, const ir::SizeBindings& sizes) {
  std::vector<int64_t> values;
  for (const auto& s : fn.size_params) {
    auto it = sizes.find(s);
    values.push_back(it == sizes.end() ? 0 : it->second);
  }
  return values;
}

}  // namespace

std::vector<Tensor> CompiledFunction::run(const std::vector<Tensor>& inputs,
                                          const ir::SizeBindings& given) const {
  const ir::Function& fn = *fn_;
  const ir::SizeBindings sizes = ir::bind_sizes(fn, inputs, given);
  lower::check_reads_in_bounds(fn, sizes);
  const std::vector<int64_t> size_values = size_values_of(fn, sizes);
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
  const int status = entry_.packed(size_values.data(), buffers.data());
  if (status != 0) fail(status, sizes);
  return outputs;
}

DeviceBinding CompiledFunction::bind_on_device(const std::vector<TensorShape>& inputs,
                                               const ir::SizeBindings& given) const {
  if (!entry_.on_device)
    throw BindError("'" + fn_->name + "' was not compiled for a GPU target: its buffers are " +
                    "the host's");
  const ir::Function& fn = *fn_;
  DeviceBinding b;
  b.sizes = ir::bind_shapes(fn, inputs, given);
  lower::check_reads_in_bounds(fn, b.sizes);
  for (const auto& v : fn.outputs) {
    b.outputs.push_back({v->type, ir::concrete_shape(*v, b.sizes)});
    check_tensor_bytes("output '" + v->name + "'", v->type, b.outputs.back().shape);
  }
  b.workspace_bytes = entry_.workspace_bytes(size_values_of(fn, b.sizes).data());
  if (b.workspace_bytes < 0)
    throw BindError("the workspace of '" + fn.name + "' overflows a 64-bit byte size");
  return b;
}

void CompiledFunction::run_on_device(const DeviceBinding& binding, const void* const* inputs,
                                     void* const* outputs, void* workspace) const {
  const ir::Function& fn = *fn_;
  TENET_ASSERT(entry_.on_device, fn.name << " has no device entry point");
  for (size_t i = 0; i < fn.outputs.size(); ++i) {
    const int k = updates_[i];
    if (k >= 0 && inputs[k] != outputs[i])
      throw BindError("output '" + fn.outputs[i]->name + "' of '" + fn.name +
                      "' updates an input: on the device, give it the input's buffer");
  }
  const std::vector<int64_t> size_values = size_values_of(fn, binding.sizes);
  std::vector<void*> buffers;
  pack(inputs, outputs, std::vector<size_t>(fn.outputs.size(), 0), buffers);
  const int status = entry_.on_device(size_values.data(), buffers.data(), workspace);
  if (status != 0) fail(status, binding.sizes);
}

void CompiledFunction::pack(const void* const* inputs, void* const* outputs,
                            const std::vector<size_t>& output_bytes,
                            std::vector<void*>& buffers) const {
  const ir::Function& fn = *fn_;
  buffers.clear();
  for (size_t k = 0; k < fn.inputs.size(); ++k)
    if (!updated_[k]) buffers.push_back(const_cast<void*>(inputs[k]));
  for (size_t i = 0; i < fn.outputs.size(); ++i) {
    buffers.push_back(outputs[i]);
    const int k = updates_[i];
    if (k >= 0 && inputs[k] != outputs[i] && output_bytes[i] > 0)
      std::memcpy(outputs[i], inputs[k], output_bytes[i]);
  }
}

}  // namespace tenet::jit
