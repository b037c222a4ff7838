// Gradient programs (ad::differentiate) are ordinary IR, so their contractions
// are lowered too: a convolution's weight gradient is a plain contraction, its
// input gradient a gather (split into windows when strided; as loops when a
// packed factor would be mostly zeros). Each case asserts what is lowered and compares with the
// interpreter.
#include <gtest/gtest.h>

#include "ad/grad.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/codegen/contraction_util.h"
#include "tests/support/golden.h"

namespace tenet::codegen::testing {
namespace {

/// The vector-Jacobian product program of `fn` in the file `path`.
ir::Module gradient(const std::string& path, const std::string& fn) {
  return gradient_of_source(tenet::testing::read_file(tenet::testing::source_path(path)), fn);
}

bool scatters_windows(const std::string& source) {
  return source.find("As a scatter") != std::string::npos;
}

TEST(ContractionGrad, ConvStride1) {
  // Forward and weight gradient as GEMMs; the input gradient, a guarded
  // gather, runs as loops: as a GEMM it would pack the weight into a matrix
  // of (O, y, z) x (h, w), mostly zeros (passes/contraction.h,
  // kMaxPackExpansion).
  ir::Module g = gradient("models/conv2d.tn", "conv2d");
  const std::string source = expect_gemm_matches_interpreter(
      g, "conv2d_grad", {{"B", 2}, {"C", 6}, {"H", 12}, {"W", 11}, {"O", 20}, {"KH", 3}, {"KW", 3}},
      2);
  EXPECT_EQ(source.find("w_packed"), std::string::npos) << source;
}

TEST(ContractionGrad, ConvStride2) {
  ir::Module g = gradient("models/conv2d.tn", "conv2d_stride2");
  expect_gemm_matches_interpreter(g, "conv2d_stride2_grad",
                                  {{"B", 2}, {"C", 3}, {"H", 21}, {"W", 20}, {"O", 8}}, 3);
}

// The split gathers (col2im) run as scatters of windows (codegen/gemm_col2im.cpp):
// padding 1 and stride 2 on odd and even sizes give windows clipped at both
// ends; the input gradient adds onto an init (x is also squared). The
// weight gradient is not split: its columns would be the whole image per
// kernel tap (passes/contraction_split.cpp), so it is one GEMM over im2col.
const char* const kPaddedStride2 =
    "def padded(float(B, C, H, W) x, float(O, C, 3, 3) w) -> (y, z) {\n"
    "  y(b, o, i, j) +=! x?(b, c, 2*i + ki - 1, 2*j + kj - 1) * w(o, c, ki, kj)\n"
    "      where b in 0:B, i in 0:(H + 1)/2, j in 0:(W + 1)/2\n"
    "  z(b, c, h, v) = x(b, c, h, v) * x(b, c, h, v)\n"
    "}\n";
// Large enough for every GEMM to run (M*N*K >= passes::kGemmMinWork).
const ir::SizeBindings kPaddedSizes{{"B", 4}, {"C", 8}, {"H", 9}, {"W", 8}, {"O", 16}};

TEST(ContractionGrad, PaddedStride2ScattersWindows) {
  const std::string source = expect_gemm_matches_interpreter(
      gradient_of_source(kPaddedStride2, "padded"), "padded_grad", kPaddedSizes, 3);
  EXPECT_TRUE(scatters_windows(source));
  EXPECT_NE(source.find("starts from d_x"), std::string::npos) << "the init of d_x";
}

TEST(ContractionGrad, ScatteredWindowsInChunks) {
  // Budgets that chunk the split statements: a few hundred bytes (chunks
  // that end mid-image and a last short chunk) and 1 byte (less than one
  // slice of any index: chunks of one).
  for (int64_t budget : {600, 1}) {
    jit::JitOptions options = test_jit_options();
    options.cpp.pack_budget_bytes = budget;
    const std::string source = expect_gemm_matches_interpreter(
        gradient_of_source(kPaddedStride2, "padded"), "padded_grad", kPaddedSizes, 3, 11, &options);
    EXPECT_TRUE(scatters_windows(source)) << "budget " << budget;
    EXPECT_NE(source.find("_start"), std::string::npos) << "budget " << budget << ": no chunks";
  }
}

TEST(ContractionGrad, StrideLargerThanKernelLeavesGaps) {
  // Stride 3, kernel 2: the windows do not overlap and every third row and
  // column of d_x gets no term (it stays 0).
  const std::string source = expect_gemm_matches_interpreter(
      gradient_of_source("def gaps(float(B, C, 11, 10) x, float(O, C, 2, 2) w) -> (y) {\n"
                         "  y(b, o, i, j) +=! x(b, c, 3*i + ki, 3*j + kj) * w(o, c, ki, kj)\n"
                         "}\n",
                         "gaps"),
      "gaps_grad", {{"B", 4}, {"C", 16}, {"O", 32}}, 3);
  EXPECT_TRUE(scatters_windows(source));
}

// A 3x3 convolution over 2x2 images (ResNet-18's last stage at 64x64): the
// input gradient as one GEMM packs the weight into a (O, y, x) x (C, h, w)
// matrix, as large as the weight and rebuilt every call, for a GEMM of B rows.
// At a batch of 2 that packing outweighs the split's extra multiply-adds (a
// GEMM of the weight as stored into columns, then col2im); at 16 it does not
// (passes/contraction_split.cpp, packing_outweighs). (128 channels: windows
// of 1152 terms over 4 pixels are GEMMs, not convolution-library calls.)
std::string tiny_image_conv(int batch) {
  return "def tiny(float(" + std::to_string(batch) +
         ", 128, 2, 2) x, float(128, 128, 3, 3) w) -> (y) {\n"
         "  y(b, o, i, j) +=! x?(b, c, i + ki - 1, j + kj - 1) * w(o, c, ki, kj)\n"
         "      where b in 0:" +
         std::to_string(batch) +
         ", i in 0:2, j in 0:2\n"
         "}\n";
}

TEST(ContractionGrad, TinyImageInputGradientSplitsAtSmallBatch) {
  const std::string small = expect_gemm_matches_interpreter(
      gradient_of_source(tiny_image_conv(2), "tiny"), "tiny_grad", {}, 3);
  EXPECT_NE(small.find("d_x_cols"), std::string::npos) << small;
  const std::string large = expect_gemm_matches_interpreter(
      gradient_of_source(tiny_image_conv(16), "tiny"), "tiny_grad", {}, 3);
  EXPECT_EQ(large.find("d_x_cols"), std::string::npos) << large;
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
