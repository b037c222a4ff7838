// The CUDA target's kernels on the grid emulator (tier T1 of docs/cuda.md):
// every program of the operator zoo (tests/zoo/zoo_table.cpp), its forward
// outputs and gradients, compiled for `cuda-emulated` (no CPU schedule,
// every splittable loop a kernel, map_kernels' one thread per element) and
// run thread by thread on the CPU, against the float32 interpreter running
// the gradient straight from AD. Indexing, grid bounds, the decomposition of
// the thread index and the host code around the kernels are what this
// checks on every CI run, without a GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "ad/grad.h"
#include "driver/driver.h"
#include "ir/interp.h"
#include "jit/jit.h"
#include "support/error.h"
#include "tests/zoo/zoo_util.h"

namespace tenet::zoo {
namespace {

constexpr uint64_t kSeed = 5;
constexpr const char* kTarget = "cuda-emulated";

// As the CPU backend's zoo check (tests/zoo/zoo_test.cpp): compiled and
// interpreted float32 differ by summation order and contraction only; a
// wrong index or a missing term gives errors of order 1.
constexpr double kTolerance = 1e-4;

jit::JitOptions jit_options() {
  jit::JitOptions options;
  const char* dir = std::getenv("TENET_CACHE_DIR");
  options.cache_dir = dir && *dir ? dir : std::string(TENET_BINARY_DIR) + "/tenet-cache";
  return options;
}

struct EmulatedZoo {
  std::map<std::string, size_t> index;  // case_id -> position
  std::vector<ir::Function> reference;
  std::vector<jit::CompiledFunction> compiled;
  std::string error;
};

// Every zoo gradient in one unit (one compiler run, cached across runs).
const EmulatedZoo& emulated_zoo() {
  static const EmulatedZoo zoo = [] {
    EmulatedZoo z;
    const auto start = std::chrono::steady_clock::now();
    try {
      ir::Module m;
      std::vector<std::string> names;
      for (const ZooCase& c : zoo_table()) {
        const ir::Function* fn = zoo_module(c.file).find(c.fn);
        TENET_ASSERT(fn, "zoo table: no function " + c.fn + " in " + c.file);
        ir::Function grad = ad::differentiate(*fn, c.request);
        grad.name = case_id(c) + "_grad";
        z.index[case_id(c)] = names.size();
        names.push_back(grad.name);
        z.reference.push_back(grad.clone());
        m.functions.push_back(std::move(grad));
      }
      driver::optimise(m, kTarget);
      z.compiled = driver::jit_compile_together(m, names, jit_options(), kTarget);
    } catch (const std::exception& e) {
      z.error = e.what();
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("[emulated zoo] %zu gradient functions built in %.1f s\n", z.reference.size(),
                seconds);
    return z;
  }();
  return zoo;
}

class EmulatedZooGrad : public ::testing::TestWithParam<ZooCase> {};

TEST_P(EmulatedZooGrad, MatchesInterpreter) {
  const ZooCase& c = GetParam();
  const ir::Function* fn = zoo_module(c.file).find(c.fn);
  ASSERT_NE(fn, nullptr);
  const EmulatedZoo& zoo = emulated_zoo();
  ASSERT_TRUE(zoo.error.empty()) << zoo.error;
  const size_t k = zoo.index.at(case_id(c));
  const ir::Function& grad = zoo.reference[k];
  const std::vector<Tensor> inputs = make_inputs(*fn, c.sizes, kSeed, c.ranges, c.int_hi);
  const std::vector<Tensor> grad_inputs = with_cotangents(*fn, grad, inputs, kSeed);
  const std::vector<Tensor> expected = ir::interpret(grad, grad_inputs);
  const std::vector<Tensor> actual = zoo.compiled[k].run(grad_inputs);
  ASSERT_EQ(actual.size(), expected.size());
  double worst = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double rel = max_rel_to_peak(actual[i], expected[i]);
    EXPECT_LE(rel, kTolerance) << c.fn << ": emulated " << grad.output_names[i] << " differs";
    worst = std::max(worst, rel);
  }
  std::printf("[emulated zoo] %-24s max rel %.1e\n", case_id(c).c_str(), worst);
}

INSTANTIATE_TEST_SUITE_P(Zoo, EmulatedZooGrad, ::testing::ValuesIn(zoo_table()),
                         [](const ::testing::TestParamInfo<ZooCase>& param_info) {
                           return case_id(param_info.param);
                         });

}  // namespace
}  // namespace tenet::zoo
