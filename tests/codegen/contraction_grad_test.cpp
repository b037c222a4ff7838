// Gradient programs (ad::differentiate) are ordinary IR, so their contractions
// are lowered too: a convolution's weight gradient is a plain contraction, its
// input gradient a gather whose guarded read is packed with zeros outside the
// tensor. Each case asserts what is lowered and compares with the interpreter.
#include <gtest/gtest.h>

#include "ad/grad.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/codegen/contraction_util.h"
#include "tests/support/golden.h"

namespace tenet::codegen::testing {
namespace {

/// The vector-Jacobian product program of `fn` in `path`, alone in a module.
ir::Module gradient(const std::string& path, const std::string& fn) {
  ir::Module m = compile_tn(tenet::testing::read_file(tenet::testing::source_path(path)));
  ad::GradRequest req;
  req.vjp = true;
  ir::Module out;
  out.functions.push_back(ad::differentiate(m, fn, req));
  return out;
}

TEST(ContractionGrad, ConvStride1) {
  // Forward, input gradient (guarded gather) and weight gradient.
  ir::Module g = gradient("models/conv2d.tn", "conv2d");
  const std::string source = expect_gemm_matches_interpreter(
      g, "conv2d_grad", {{"B", 2}, {"C", 6}, {"H", 12}, {"W", 11}, {"O", 20}, {"KH", 3}, {"KW", 3}},
      3);
  EXPECT_NE(source.find("tenet::in_bounds"), std::string::npos);
}

TEST(ContractionGrad, ConvStride2) {
  ir::Module g = gradient("models/conv2d.tn", "conv2d_stride2");
  expect_gemm_matches_interpreter(g, "conv2d_stride2_grad",
                                  {{"B", 2}, {"C", 3}, {"H", 21}, {"W", 20}, {"O", 8}}, 3);
}

TEST(ContractionGrad, Linear) {
  ir::Module g = gradient("models/linear.tn", "linear");
  expect_gemm_matches_interpreter(g, "linear_grad", {{"B", 64}, {"I", 48}, {"O", 40}}, 3);
}

TEST(ContractionGrad, CapsuleTransform) {
  ir::Module g = gradient("models/capsule_transform.tn", "capsule_transform");
  expect_gemm_matches_interpreter(
      g, "capsule_transform_grad",
      {{"B", 64}, {"T", 2}, {"Y", 1}, {"X", 2}, {"D", 8}, {"K", 10}, {"E", 16}}, 3);
}

TEST(ContractionGrad, Matmul) {
  ir::Module g = gradient("models/matmul.tn", "matmul");
  expect_gemm_matches_interpreter(g, "matmul_grad", {{"M", 70}, {"K", 50}, {"N", 40}}, 3);
}

}  // namespace
}  // namespace tenet::codegen::testing
