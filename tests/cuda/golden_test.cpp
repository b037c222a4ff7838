// The GPU targets' printed forms as goldens: the loop tree after
// map_kernels (lower/kernels.h: which loops became a kernel's grid, which
// code runs on one thread, what stays on the host) and the CUDA source of
// the kernels (codegen's Kernels::Cuda), for a shared softmax, a gather with
// checked computed indices, a max-pool's scatter gradient and a routing
// iteration with its ir::Loop. The emulator runs the same kernel text
// (emulated_zoo_test.cpp), NVRTC compiles it (nvrtc_zoo_test.cpp).
#include <gtest/gtest.h>

#include "driver/driver.h"
#include "lower/loops.h"
#include "tests/support/golden.h"

namespace tenet::cuda::testing {
namespace {

driver::Compilation compiled(const std::string& model, const std::string& fn, bool grad,
                             const std::string& stop_after) {
  driver::Request r;
  r.path = std::string(TENET_SOURCE_DIR) + "/models/zoo/" + model + ".tn";
  r.target = "cuda";
  std::optional<ad::GradRequest> vjp;
  if (grad) {
    vjp.emplace();
    vjp->vjp = true;
  }
  r.functions.push_back({fn, vjp});
  r.stop_after = stop_after;
  r.emit_code = stop_after == "cuda";
  return driver::compile(r);
}

void expect_goldens(const std::string& model, const std::string& fn, bool grad) {
  const std::string name = "cuda/" + model + (grad ? ".vjp" : "");
  const driver::Compilation mapped = compiled(model, fn, grad, "map_kernels");
  std::string tree;
  for (const lower::LoweredFunction& f : mapped.lowered->functions)
    tree += lower::print(f.loops, *f.function);
  tenet::testing::expect_golden(name + ".kernels.txt", tree);
  const driver::Compilation code = compiled(model, fn, grad, "cuda");
  ASSERT_TRUE(code.cpp.has_value());
  tenet::testing::expect_golden(name + ".cu", code.cpp->kernels);
}

TEST(CudaGolden, SoftmaxRowsAndElements) {
  expect_goldens("softmax", "softmax", false);
}

TEST(CudaGolden, GatherWithCheckedIndices) {
  expect_goldens("tc_gather", "tc_gather", true);
}

TEST(CudaGolden, MaxPoolScatterGradient) {
  expect_goldens("maxpool2x2", "maxpool2x2", true);
}

TEST(CudaGolden, RoutingLoopOnTheHost) {
  expect_goldens("routing3", "routing3", false);
}

}  // namespace
}  // namespace tenet::cuda::testing
