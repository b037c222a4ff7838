// The GPU targets (target.h): the loop tree mapped to kernels
// (lower/kernels.h), printed as CUDA (`cuda`) or run by the grid emulator on
// the CPU (`cuda-emulated`: the same kernel text as C++, built and loaded by
// the host JIT). docs/cuda.md describes both.
#include "codegen/cpp.h"
#include "cuda/device.h"
#include "cuda/nvrtc.h"
#include "driver/target.h"
#include "jit/jit.h"
#include "lower/kernels.h"
#include "passes/contraction.h"
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

const passes::Pass kGpuContraction = {
    "gpu_contraction",
    "contractions as GEMM plans, convolutions too (no cuDNN yet: im2col GEMMs or loops)",
    passes::contraction_without_convolutions};

codegen::CppOptions with_kernels(codegen::CppOptions o, codegen::CppOptions::Kernels kernels) {
  o.kernels = kernels;
  o.openmp = false;  // the kernels are the parallel code
  return o;
}

/// The tail's printing stage: the unit with its kernels in `dialect`.
template <codegen::CppOptions::Kernels dialect>
void generate(Compilation& c, const Request& r) {
  c.cpp = codegen::emit_cpp(lowered_functions(c), with_kernels(r.cpp, dialect));
}

/// The GPU at hand (a UsageError without one), the kernels compiled for it
/// by NVRTC, the host code by the host JIT, the kernels handed to it.
std::vector<jit::CompiledFunction> load_cuda(const Compilation& c, const jit::JitOptions& options) {
  TENET_ASSERT(c.cpp && c.cpp->uses_cuda, "the cuda target loads a compilation that ran its stage");
  const cuda::Gpu gpu = cuda::find_gpu();
  const cuda::DeviceCode code =
      cuda::compile_kernels(c.cpp->kernels, c.cpp->kernels_name, gpu.arch());
  std::vector<jit::CompiledFunction> functions =
      jit::jit_compile_unit(*c.cpp, c.optimised, c.function_names(), options);
  using LoadKernels = const char* (*)(const void*);
  const std::string loader = codegen::cuda_unit_symbol(c.cpp->unit_name) + "__load_kernels";
  auto load = reinterpret_cast<LoadKernels>(functions.at(0).unit().symbol(loader));
  TENET_ASSERT(load, "the cuda unit " << c.cpp->source_name << " has no " << loader);
  if (const char* error = load(code.cubin.data()))
    throw BindError(std::string("the kernels of ") + c.cpp->kernels_name +
                    " do not load on the GPU: " + error);
  return functions;
}

Target make_emulated_target() {
  Target t;
  t.name = "cuda-emulated";
  t.summary =
      "the CUDA target's kernels run on the CPU by the grid emulator (runtime/tenet_emulator.h)";
  t.language = "C++";
  t.passes = {kGpuContraction};
  t.lowering = gpu_lowering;
  t.tail = {
      kMapKernels,
      {"emulate", "host code and kernels -> one C++17 unit for the grid emulator (codegen/cpp.h)",
       Form::Code, generate<codegen::CppOptions::Kernels::Emulated>}};
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
  t.passes = {kGpuContraction};
  t.lowering = gpu_lowering;
  t.tail = {kMapKernels,
            {"cuda", "host code and kernels -> CUDA C++ (codegen/cpp.h, Kernels::Cuda)", Form::Code,
             generate<codegen::CppOptions::Kernels::Cuda>}};
  t.print = [](const Compilation& c) { return print_cpp(*c.cpp); };
  t.load_request = [](Request& r, const jit::JitOptions& options) { r.cpp = options.cpp; };
  t.load = load_cuda;
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
