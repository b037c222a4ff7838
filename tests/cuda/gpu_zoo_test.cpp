// The zoo on a GPU (tier T2 of docs/cuda.md; scripts/gpu-check.sh runs it
// on a GPU machine): every program's forward outputs and gradients through
// the `cuda` target against the float32 interpreter (the CPU backend's
// tolerance), against the grid emulator (the same kernel text: bitwise, for
// the functions that call no library, whose GEMMs are cuBLAS' on the GPU and
// the CPU BLAS' on the emulator, and no math function the CUDA math library
// and the C library may round differently), and against a second run on the GPU
// (bitwise: the same GPU, driver and libraries give the same bits). Without
// a GPU every case skips, saying why.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "ir/interp.h"
#include "ir/mutator.h"
#include "tests/cuda/cuda_zoo.h"
#include "tests/zoo/zoo_util.h"

namespace tenet::zoo {
namespace {

constexpr uint64_t kSeed = 5;
constexpr double kTolerance = 1e-4;  // as tests/zoo/zoo_test.cpp

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

/// Whether a math function of `e` may round differently on the GPU (the
/// CUDA math library) than on the host (the C library): every
/// transcendental function but float32 exp, log, tanh, erf and sigmoid,
/// which are Tenet's own on both (runtime/tenet_vmath.h). Square roots,
/// division and the rounding functions are exact on both.
bool device_math(const ir::Expr& e) {
  using ir::UnOp;
  if (e->kind == ir::ExprKind::Unary) {
    switch (e->unop) {
      case UnOp::Exp:
      case UnOp::Log:
      case UnOp::Tanh:
      case UnOp::Erf:
      case UnOp::Sigmoid:
        return e->type == ElemType::F64;
      case UnOp::Exp2:
      case UnOp::Log2:
      case UnOp::Log10:
      case UnOp::Log1p:
      case UnOp::Expm1:
      case UnOp::Sin:
      case UnOp::Cos:
      case UnOp::Tan:
      case UnOp::Asin:
      case UnOp::Acos:
      case UnOp::Atan:
      case UnOp::Sinh:
      case UnOp::Cosh:
      case UnOp::Erfc:
      case UnOp::Cbrt:
        return true;
      default:
        return false;
    }
  }
  return e->kind == ir::ExprKind::Binary &&
         (e->binop == ir::BinOp::Pow || e->binop == ir::BinOp::Atan2 ||
          e->binop == ir::BinOp::Hypot);
}

/// Whether the GPU and the emulator may differ in the last bits running
/// `body`: a library call (cuBLAS against the CPU's BLAS) or device math.
bool may_round_differently(const std::vector<ir::Stmt>& body) {
  for (const ir::Stmt& s : body) {
    if (s.kind == ir::StmtKind::Loop) {
      if (may_round_differently(s.loop->body)) return true;
      continue;
    }
    if (s.annotations.gemm || s.annotations.conv) return true;
    if (ir::any_node(s.compute.body, device_math)) return true;
  }
  return false;
}

class GpuZooGrad : public ::testing::TestWithParam<ZooCase> {};

TEST_P(GpuZooGrad, MatchesInterpreterEmulatorAndItself) {
  const ZooCase& c = GetParam();
  const TargetZoo& gpu = zoo_on("cuda");
  if (gpu.unavailable) GTEST_SKIP() << gpu.error;
  ASSERT_TRUE(gpu.error.empty()) << gpu.error;
  const TargetZoo& emulated = zoo_on("cuda-emulated");
  ASSERT_TRUE(emulated.error.empty()) << emulated.error;
  const ir::Function* fn = zoo_module(c.file).find(c.fn);
  ASSERT_NE(fn, nullptr);
  const size_t k = gpu.index.at(case_id(c));
  const ir::Function& grad = gpu.reference[k];
  const std::vector<Tensor> inputs = make_inputs(*fn, c.sizes, kSeed, c.ranges, c.int_hi);
  const std::vector<Tensor> grad_inputs = with_cotangents(*fn, grad, inputs, kSeed);
  const std::vector<Tensor> expected = ir::interpret(grad, grad_inputs);
  const std::vector<Tensor> actual = gpu.compiled[k].run(grad_inputs);
  const std::vector<Tensor> again = gpu.compiled[k].run(grad_inputs);
  const std::vector<Tensor> on_cpu =
      emulated.compiled[emulated.index.at(case_id(c))].run(grad_inputs);
  const bool library = may_round_differently(gpu.module.functions[k].body);
  ASSERT_EQ(actual.size(), expected.size());
  double worst = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const std::string& name = grad.output_names[i];
    const double rel = max_rel_to_peak(actual[i], expected[i]);
    EXPECT_LE(rel, kTolerance) << c.fn << ": " << name << " on the GPU differs";
    EXPECT_TRUE(bitwise_equal(actual[i], again[i])) << name << ": two runs differ";
    if (!library) {
      EXPECT_TRUE(bitwise_equal(actual[i], on_cpu[i])) << name << ": GPU and emulator differ";
    }
    worst = std::max(worst, rel);
  }
  std::printf("[gpu zoo] %-24s max rel %.1e%s\n", case_id(c).c_str(), worst,
              library ? " (library or math-library calls: emulator within tolerance)"
                      : ", emulator bitwise");
}

INSTANTIATE_TEST_SUITE_P(Zoo, GpuZooGrad, ::testing::ValuesIn(zoo_table()),
                         [](const ::testing::TestParamInfo<ZooCase>& param_info) {
                           return case_id(param_info.param);
                         });

}  // namespace
}  // namespace tenet::zoo
