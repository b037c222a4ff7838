// The GPU targets (target.h): the loop tree mapped to kernels
// (lower/kernels.h), printed as CUDA (`cuda`) or run by the grid emulator on
// the CPU (`cuda-emulated`: the same kernel text as C++, built and loaded by
// the host JIT). docs/cuda.md describes both.
#include "codegen/cpp.h"
#include "driver/target.h"
#include "jit/jit.h"
#include "lower/kernels.h"
#include "support/error.h"

namespace tenet::driver {

namespace {

/// The shared lowering as a GPU wants it: every loop that may be split is
/// parallel (map_kernels gives it threads), whatever its work.
LoweringOptions gpu_lowering(const Request& r) {
  LoweringOptions o;
  o.pack_budget_bytes = r.cpp.pack_budget_bytes;
  o.loops.parallel = true;
  o.loops.parallel_min_work = 0;
  o.loops.index_checks = r.cpp.index_checks;
  return o;
}

void map_kernels(Compilation& c, const Request&) {
  const lower::KernelOptions options;
  for (lower::LoweredFunction& f : c.lowered->functions) lower::map_kernels(f.loops, options);
}

const Stage kMapKernels = {
    "map_kernels",
    "the loop tree -> host code and kernels, one thread per element (lower/kernels.h)", Form::Loops,
    map_kernels};

codegen::CppOptions with_kernels(codegen::CppOptions o, codegen::CppOptions::Kernels kernels) {
  o.kernels = kernels;
  o.openmp = false;  // the kernels are the parallel code
  return o;
}

void generate_emulated(Compilation& c, const Request& r) {
  std::vector<const lower::LoweredFunction*> functions;
  for (const lower::LoweredFunction& f : c.lowered->functions) functions.push_back(&f);
  c.cpp = codegen::emit_cpp(functions, with_kernels(r.cpp, codegen::CppOptions::Kernels::Emulated));
}

void generate_cuda(Compilation& c, const Request& r) {
  std::vector<const lower::LoweredFunction*> functions;
  for (const lower::LoweredFunction& f : c.lowered->functions) functions.push_back(&f);
  c.cpp = codegen::emit_cpp(functions, with_kernels(r.cpp, codegen::CppOptions::Kernels::Cuda));
}

Target make_emulated_target() {
  Target t;
  t.name = "cuda-emulated";
  t.summary =
      "the CUDA target's kernels run on the CPU by the grid emulator (runtime/tenet_emulator.h)";
  t.language = "C++";
  t.lowering = gpu_lowering;
  t.tail = {
      kMapKernels,
      {"emulate", "host code and kernels -> one C++17 unit for the grid emulator (codegen/cpp.h)",
       Form::Code, generate_emulated}};
  t.print = [](const Compilation& c) { return print_cpp(*c.cpp); };
  t.load_request = [](Request& r, const jit::JitOptions& options) { r.cpp = options.cpp; };
  t.load = [](const Compilation& c, const jit::JitOptions& options) {
    TENET_ASSERT(c.cpp, "the cuda-emulated target loads a compilation that ran its emulate stage");
    return jit::jit_compile_unit(*c.cpp, c.optimised, c.function_names(), options);
  };
  return t;
}

Target make_cuda_target() {
  Target t;
  t.name = "cuda";
  t.summary = "CUDA kernels (NVRTC) and their host code, for NVIDIA GPUs";
  t.language = "CUDA";
  t.lowering = gpu_lowering;
  t.tail = {kMapKernels,
            {"cuda", "host code and kernels -> CUDA C++ (codegen/cpp.h, Kernels::Cuda)", Form::Code,
             generate_cuda}};
  t.print = [](const Compilation& c) { return print_cpp(*c.cpp); };
  t.load_request = [](Request& r, const jit::JitOptions& options) { r.cpp = options.cpp; };
  t.load = [](const Compilation&, const jit::JitOptions&) -> std::vector<jit::CompiledFunction> {
    throw UsageError(
        "target cuda: running on a GPU is not built yet; `--backend cuda-emulated` runs the "
        "same kernels on the CPU (docs/cuda.md)");
  };
  return t;
}

}  // namespace

const Target& cuda_emulated_target() {
  static const Target target = make_emulated_target();
  return target;
}

const Target& cuda_target() {
  static const Target target = make_cuda_target();
  return target;
}

}  // namespace tenet::driver
