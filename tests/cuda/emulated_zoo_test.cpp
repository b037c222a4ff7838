// The CUDA target's kernels on the grid emulator (tier T1 of docs/cuda.md):
// every program of the operator zoo (tests/zoo/zoo_table.cpp), its forward
// outputs and gradients, compiled for `cuda-emulated` (no CPU schedule,
// every splittable loop a kernel, map_kernels' one thread per element) and
// run thread by thread on the CPU, against the float32 interpreter running
// the gradient straight from AD. Indexing, grid bounds, the decomposition of
// the thread index and the host code around the kernels are what this
// checks on every CI run, without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "ir/interp.h"
#include "tests/cuda/cuda_zoo.h"
#include "tests/zoo/zoo_util.h"

namespace tenet::zoo {
namespace {

constexpr uint64_t kSeed = 5;
constexpr const char* kTarget = "cuda-emulated";

// As the CPU backend's zoo check (tests/zoo/zoo_test.cpp): compiled and
// interpreted float32 differ by summation order and contraction only; a
// wrong index or a missing term gives errors of order 1.
constexpr double kTolerance = 1e-4;

class EmulatedZooGrad : public ::testing::TestWithParam<ZooCase> {};

TEST_P(EmulatedZooGrad, MatchesInterpreter) {
  const ZooCase& c = GetParam();
  const ir::Function* fn = zoo_module(c.file).find(c.fn);
  ASSERT_NE(fn, nullptr);
  const TargetZoo& zoo = zoo_on(kTarget);
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
