// The CUDA target's kernels through NVRTC (tier T0 of docs/cuda.md): every
// kernel of the operator zoo's gradients (tests/zoo/zoo_table.cpp), printed
// by the `cuda` target, compiles for sm_90 (H100) and sm_80 (A100) within the
// launch bounds, without shared memory, spilling at most a few words. No GPU is needed: NVRTC and
// ptxas run on the host.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "ad/grad.h"
#include "codegen/cpp.h"
#include "cuda/nvrtc.h"
#include "driver/driver.h"
#include "driver/front_end.h"
#include "jit/jit.h"
#include "support/error.h"
#include "tests/zoo/zoo_util.h"

namespace tenet::zoo {
namespace {

// The zoo's gradients as one CUDA unit.
struct CudaZoo {
  ir::Module module;
  std::vector<std::string> names;
  codegen::CppUnit unit;
};

const CudaZoo& cuda_zoo() {
  static const CudaZoo zoo = [] {
    CudaZoo z;
    for (const ZooCase& c : zoo_table()) {
      const ir::Function* fn = zoo_module(c.file).find(c.fn);
      TENET_ASSERT(fn, "zoo table: no function " + c.fn + " in " + c.file);
      ir::Function grad = ad::differentiate(*fn, c.request);
      grad.name = case_id(c) + "_grad";
      z.names.push_back(grad.name);
      z.module.functions.push_back(std::move(grad));
    }
    driver::optimise(z.module, "cuda");
    z.unit = driver::emit_code(z.module, z.names, "cuda");
    return z;
  }();
  return zoo;
}

const codegen::CppUnit& zoo_cuda_unit() {
  return cuda_zoo().unit;
}

constexpr int64_t kSpillBudget = 64;  // bytes stored and loaded, per kernel

// NVRTC's own work dominates these compiles: the sanitizer build of the
// suite (scripts/test.sh runs both) leaves them to the plain build.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitizerBuild = true;
#elif defined(__has_feature)
constexpr bool kSanitizerBuild = __has_feature(address_sanitizer);
#else
constexpr bool kSanitizerBuild = false;
#endif

/// The shared memory kernel `name` of `source` may use: a grouped reduction
/// (lower/kernel_groups.h) combines its warps' values in 32 of up to 8 bytes
/// (runtime/tenet_cuda_device.h, group_reduce); one thread per element uses none.
int64_t shared_budget(const std::string& source, const std::string& name) {
  const size_t at = source.find(" " + name + "(");
  if (at == std::string::npos) return 0;
  const size_t end = source.find("extern \"C\"", at);
  const bool grouped =
      source.substr(at, end == std::string::npos ? end : end - at).find("tenet::group_reduce<") !=
      std::string::npos;
  return grouped ? 32 * 8 : 0;
}

class NvrtcZoo : public ::testing::TestWithParam<const char*> {};

TEST_P(NvrtcZoo, EveryKernelCompilesWithinBudgets) {
  if (kSanitizerBuild) GTEST_SKIP() << "NVRTC's compiles run in the plain build";
  std::string why;
  if (!cuda::nvrtc_available(&why)) GTEST_SKIP() << why;
  const codegen::CppUnit& unit = zoo_cuda_unit();
  ASSERT_FALSE(unit.kernels.empty());
  const cuda::DeviceCode code = cuda::compile_kernels(unit.kernels, unit.kernels_name, GetParam());
  EXPECT_FALSE(code.cubin.empty());
  // One report per kernel the source defines.
  size_t defined = 0;
  for (size_t at = 0; (at = unit.kernels.find("__global__", at)) != std::string::npos; ++at)
    ++defined;
  EXPECT_EQ(code.kernels.size(), defined) << code.log;
  int most = 0;
  int64_t most_spilled = 0;
  for (const cuda::KernelResources& k : code.kernels) {
    // A kernel's only spills are the registers saved around the out-of-line
    // slow paths of IEEE division and square root (no fast-math), a few
    // words; a kernel that keeps arrays or long live ranges in local memory
    // spills far more.
    const int64_t spilled = k.spill_store_bytes + k.spill_load_bytes;
    EXPECT_LE(spilled, kSpillBudget) << k.name << " spills on " << GetParam();
    most_spilled = std::max(most_spilled, spilled);
    // __launch_bounds__(256): 65536 registers per block on both.
    EXPECT_LE(k.registers * 256, 65536) << k.name;
    EXPECT_LE(k.shared_bytes, shared_budget(unit.kernels, k.name)) << k.name;
    most = std::max(most, k.registers);
  }
  std::printf("[nvrtc] %zu kernels for %s: at most %d registers, %lld bytes of spills\n",
              code.kernels.size(), GetParam(), most, static_cast<long long>(most_spilled));
}

INSTANTIATE_TEST_SUITE_P(Archs, NvrtcZoo, ::testing::Values("sm_90", "sm_80"));

// The models of models/ (CapsNet, the MNIST CNN, ...): every function of
// each file and its vector-Jacobian products, printed by the cuda target and
// compiled by NVRTC for sm_90 within the same budgets.
TEST(NvrtcModels, EveryModelsKernelsCompile) {
  if (kSanitizerBuild) GTEST_SKIP() << "NVRTC's compiles run in the plain build";
  std::string why;
  if (!cuda::nvrtc_available(&why)) GTEST_SKIP() << why;
  size_t files = 0, kernels = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(TENET_SOURCE_DIR) + "/models")) {
    if (entry.path().extension() != ".tn") continue;
    driver::Request front_request;
    front_request.path = entry.path().string();
    front_request.target = "cuda";
    const driver::Compilation front = driver::front_end(front_request);
    driver::Request r = front_request;
    ad::GradRequest vjp;
    vjp.vjp = true;
    for (const ir::Function& f : front.checked->functions) {
      r.functions.push_back({f.name, std::nullopt});
      bool float_output = false, float_input = false;
      for (const ir::ValuePtr& v : f.outputs) float_output = float_output || is_float(v->type);
      for (const ir::ValuePtr& v : f.inputs) float_input = float_input || is_float(v->type);
      if (float_output && float_input) r.functions.push_back({f.name, vjp});
    }
    r.emit_code = true;
    const driver::Compilation c = driver::compile(r, front);
    ASSERT_TRUE(c.cpp.has_value()) << entry.path();
    const cuda::DeviceCode code =
        cuda::compile_kernels(c.cpp->kernels, c.cpp->kernels_name, "sm_90");
    for (const cuda::KernelResources& k : code.kernels) {
      EXPECT_LE(k.spill_store_bytes + k.spill_load_bytes, kSpillBudget) << k.name;
      EXPECT_LE(k.shared_bytes, shared_budget(c.cpp->kernels, k.name)) << k.name;
    }
    ++files;
    kernels += code.kernels.size();
  }
  EXPECT_GE(files, 10u);
  std::printf("[nvrtc] %zu kernels of %zu models for sm_90\n", kernels, files);
}

// The host side of the same unit (runtime/tenet_cuda.h: launches through
// the CUDA runtime, GEMMs through cuBLAS, buffers copied to the device and
// back) compiles, links against the toolkit and loads with every entry
// point's signature checked: no GPU is needed until a function runs.
TEST(CudaHost, ZooHostCodeBuildsLinksAndLoads) {
  std::string why;
  if (!cuda::nvrtc_available(&why)) GTEST_SKIP() << "no CUDA toolkit: " << why;
  const CudaZoo& zoo = cuda_zoo();
  jit::JitOptions options;
  const char* dir = std::getenv("TENET_CACHE_DIR");
  options.cache_dir = dir && *dir ? dir : std::string(TENET_BINARY_DIR) + "/tenet-cache";
  const std::vector<jit::CompiledFunction> functions =
      jit::jit_compile_unit(zoo.unit, zoo.module, zoo.names, options);
  ASSERT_EQ(functions.size(), zoo.names.size());
  EXPECT_NE(
      functions[0].unit().symbol(codegen::cuda_unit_symbol(zoo.unit.unit_name) + "__load_kernels"),
      nullptr);
}

// ptxas' report as the compiler writes it.
TEST(Nvrtc, ParsesPtxasReports) {
  const auto kernels = cuda::parse_ptxas_log(
      "ptxas info    : Compiling entry function 'k0' for 'sm_90'\n"
      "ptxas info    : Function properties for k0\n"
      "ptxas         .     8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 22 registers, used 0 barriers, 64 bytes smem\n"
      "ptxas info    : Compiling entry function 'k1' for 'sm_90'\n"
      "ptxas info    : Used 7 registers, used 1 barriers\n");
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].name, "k0");
  EXPECT_EQ(kernels[0].stack_bytes, 8);
  EXPECT_EQ(kernels[0].spill_store_bytes, 4);
  EXPECT_EQ(kernels[0].spill_load_bytes, 12);
  EXPECT_EQ(kernels[0].registers, 22);
  EXPECT_EQ(kernels[0].shared_bytes, 64);
  EXPECT_EQ(kernels[1].registers, 7);
  EXPECT_EQ(kernels[1].shared_bytes, 0);
}

}  // namespace
}  // namespace tenet::zoo
