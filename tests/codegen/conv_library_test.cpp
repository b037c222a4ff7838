// Convolutions computed by the convolution library (runtime/tenet_conv.h):
// which statements get a convolution plan (ir/conv_plan.h), and that the
// compiled forward and gradients match the interpreter, with strides, padding
// on every side, a bottom padding oneDNN refuses (the loops compute it), a
// batch cut into blocks, and bitwise at any thread count (1, 2 and 5, for
// this machine's cut and a 64-core machine's).
#include <gtest/gtest.h>

#include <fstream>

#include "tests/codegen/codegen_test_util.h"
#include "tests/codegen/contraction_util.h"
#include "tests/support/golden.h"

namespace tenet::codegen::testing {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// 3x3, padding 1: forward, input gradient (guarded taps of dy) and weight gradient.
const char* const kPadded =
    "def conv(float(B, 16, 9, 7) x, float(32, 16, 3, 3) w) -> (y) {\n"
    "  y(b, o, i, j) +=! x?(b, c, i + ki - 1, j + kj - 1) * w(o, c, ki, kj)\n"
    "      where b in 0:B, i in 0:9, j in 0:7\n"
    "}\n";

TEST(ConvLibrary, PaddedForwardAndGradientsMatchTheInterpreter) {
  const std::string source = expect_gemm_matches_interpreter(gradient_of_source(kPadded, "conv"),
                                                             "conv_grad", {{"B", 6}}, 3);
  EXPECT_EQ(count(source, "tenet::conv2d_forward("), 1u);
  EXPECT_EQ(count(source, "tenet::conv2d_backward_data("), 1u);
  EXPECT_EQ(count(source, "tenet::conv2d_backward_weights("), 1u);
}

// Stride 2 with padding 1 on odd sizes: the input gradient reads the filter
// through the windows (w?(o, c, a - 2*p + 1, ...)); the bottom and right
// paddings are 1 and 0.
TEST(ConvLibrary, StridedForwardAndGradientsMatchTheInterpreter) {
  const char* source =
      "def conv(float(B, 16, 9, 8) x, float(24, 16, 3, 3) w) -> (y) {\n"
      "  y(b, o, i, j) +=! x?(b, c, 2*i + ki - 1, 2*j + kj - 1) * w(o, c, ki, kj)\n"
      "      where b in 0:B, i in 0:5, j in 0:4\n"
      "}\n";
  const std::string code = expect_gemm_matches_interpreter(gradient_of_source(source, "conv"),
                                                           "conv_grad", {{"B", 12}}, 3);
  EXPECT_EQ(count(code, "tenet::conv2d_"), 3u);
}

// Stride 2, no padding, on 8 rows: the last row is in no window, a bottom
// padding of -1, which oneDNN refuses: it gets the image without that row, and
// the input gradient there is 0.
TEST(ConvLibrary, NegativeBottomPaddingLeavesTheLastRowOut) {
  const char* source =
      "def conv(float(B, 8, 8, 8) x, float(16, 8, 3, 3) w) -> (y) {\n"
      "  y(b, o, i, j) +=! x?(b, c, 2*i + ki, 2*j + kj) * w(o, c, ki, kj)\n"
      "      where b in 0:B, i in 0:3, j in 0:3\n"
      "}\n";
  expect_gemm_matches_interpreter(gradient_of_source(source, "conv"), "conv_grad", {{"B", 5}}, 3);
}

// 1x1 and a single input channel (MNIST's first layer): no padding, and a
// filter layout oneDNN may keep plain.
TEST(ConvLibrary, PointwiseAndSingleChannelMatchTheInterpreter) {
  const char* source =
      "def pointwise(float(B, 32, 6, 6) x, float(64, 32, 1, 1) w) -> (y) {\n"
      "  y(b, o, i, j) +=! x(b, c, i + ki, j + kj) * w(o, c, ki, kj)\n"
      "      where b in 0:B, i in 0:6, j in 0:6\n"
      "}\n"
      "def first(float(B, 1, 12, 12) x, float(8, 1, 5, 5) w) -> (y) {\n"
      "  y(b, o, i, j) +=! x(b, c, i + ki, j + kj) * w(o, c, ki, kj)\n"
      "      where i in 0:8, j in 0:8\n"
      "}\n";
  expect_gemm_matches_interpreter(gradient_of_source(source, "pointwise"), "pointwise_grad",
                                  {{"B", 16}}, 3);
  expect_gemm_matches_interpreter(gradient_of_source(source, "first"), "first_grad", {{"B", 16}},
                                  3);
}

// Depthwise (the importer's form: the filter's one input channel read at 0):
// the forward, the input gradient and the weight gradient (where that channel
// is an index of extent 1 that neither factor reads) are the library's, with
// groups = 24.
TEST(ConvLibrary, DepthwiseForwardAndGradientsMatchTheInterpreter) {
  const char* source =
      "def depthwise(float(B, 24, 9, 10) x, float(24, 1, 3, 3) w) -> (y) {\n"
      "  y(b, g, i, j) +=! x?(b, g, i + ki - 1, j + kj - 1) * w(g, 0, ki, kj)\n"
      "      where b in 0:B, i in 0:9, j in 0:10\n"
      "}\n"
      "def strided(float(B, 16, 9, 10) x, float(16, 1, 3, 3) w) -> (y) {\n"
      "  y(b, g, i, j) +=! x?(b, g, 2*i + ki - 1, 2*j + kj - 1) * w(g, 0, ki, kj)\n"
      "      where b in 0:B, i in 0:5, j in 0:5\n"
      "}\n";
  const std::string code = expect_gemm_matches_interpreter(gradient_of_source(source, "depthwise"),
                                                           "depthwise_grad", {{"B", 8}}, 3);
  EXPECT_EQ(count(code, "tenet::conv2d_forward("), 1u);
  EXPECT_EQ(count(code, "tenet::conv2d_backward_data("), 1u);
  EXPECT_EQ(count(code, "tenet::conv2d_backward_weights("), 1u);
  EXPECT_EQ(count(code, "groups 24, stride"), 3u);  // the calls' comments
  // Strided: the forward and the weight gradient (the input gradient of a
  // stride-2 depthwise convolution reads the filter through windows, which
  // the library is not given; it runs as loops: as a GEMM its packed filter
  // would be mostly zeros, passes/contraction.h kMaxPackExpansion).
  const std::string strided = expect_gemm_matches_interpreter(gradient_of_source(source, "strided"),
                                                              "strided_grad", {{"B", 8}}, 2);
  EXPECT_EQ(count(strided, "tenet::conv2d_forward("), 1u);
  EXPECT_EQ(count(strided, "tenet::conv2d_backward_weights("), 1u);
}

// Not a library convolution: dilation (ki's coefficient 2), a window sum of
// more than passes::kMaxLibraryConvWindow terms, symbolic channels. These stay
// GEMMs (or loops) as before.
TEST(ConvLibrary, OtherContractionsKeepTheirGemmPlans) {
  const char* source =
      "def dilated(float(B, 16, 12, 12) x, float(16, 16, 3, 3) w) -> (y) {\n"
      "  y(b, o, i, j) +=! x?(b, c, i + 2*ki - 2, j + 2*kj - 2) * w(o, c, ki, kj)\n"
      "      where b in 0:B, i in 0:12, j in 0:12\n"
      "}\n"
      "def wide(float(B, 520, 6, 6) x, float(64, 520, 3, 3) w) -> (y) {\n"
      "  y(b, o, i, j) +=! x?(b, c, i + ki - 1, j + kj - 1) * w(o, c, ki, kj)\n"
      "      where b in 0:B, i in 0:6, j in 0:6\n"
      "}\n"
      "def symbolic(float(B, C, 6, 6) x, float(O, C, 3, 3) w) -> (y) {\n"
      "  y(b, o, i, j) +=! x?(b, c, i + ki - 1, j + kj - 1) * w(o, c, ki, kj)\n"
      "      where b in 0:B, i in 0:6, j in 0:6\n"
      "}\n";
  ir::Module m = compile_tn(source);
  for (const char* fn : {"dilated", "wide", "symbolic"}) {
    const ir::SizeBindings sizes = std::string(fn) == "symbolic"
                                       ? ir::SizeBindings{{"B", 4}, {"C", 16}, {"O", 16}}
                                       : ir::SizeBindings{{"B", 4}};
    const std::string code = expect_gemm_matches_interpreter(m, fn, sizes, 1);
    EXPECT_EQ(count(code, "tenet::conv2d_"), 0u) << fn;
  }
}

TEST(ConvLibrary, GradientsAreBitwiseTheSameAtAnyThreadCount) {
  const std::string dir = fresh_folder("conv_library_threads");
  { std::ofstream(dir + "/conv.tn") << kPadded; }
  // A batch of 256: 8 blocks of images for this machine, 16 for a 64-core
  // machine's cut (TENET_PARALLEL_CORES); 5 threads share them unevenly.
  for (const std::string cores : {"", "TENET_PARALLEL_CORES=64 "}) {
    std::string first;
    for (int threads : {1, 2, 2, 5}) {
      const std::string out = dir + "/run" + std::to_string(threads) + std::to_string(first.size());
      tenet::testing::CommandResult r = tenet::testing::run_command(
          cores + "OMP_NUM_THREADS=" + std::to_string(threads) + " " +
          tenet::testing::tenet_binary() + " run " + dir +
          "/conv.tn --grad --vjp --backend cpp --seed 3 --sizes B=256 --save " + out);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      std::string bytes;
      for (const char* n : {"y", "d_x", "d_w"})
        bytes += tenet::testing::read_file(out + "/" + n + ".npy");
      EXPECT_GT(bytes.size(), size_t(4 * 256 * 32 * 9 * 7));
      if (first.empty())
        first = bytes;
      else
        EXPECT_TRUE(bytes == first) << cores << threads << " threads give other bits";
    }
  }
}

}  // namespace
}  // namespace tenet::codegen::testing
