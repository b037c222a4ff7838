// Contractions lowered to GEMM calls (passes/contraction.h, codegen/cpp_gemm.cpp):
// each case asserts which statements are lowered and that the JIT-compiled
// function matches the interpreter (tolerance: tests/codegen/contraction_util.h).
#include <gtest/gtest.h>

#include <cstdlib>

#include "driver/driver.h"
#include "ir/ir_parser.h"
#include "passes/pipeline.h"
#include "support/error.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/codegen/contraction_util.h"
#include "tests/support/golden.h"

namespace tenet::codegen::testing {
namespace {

ir::Module model(const std::string& path) {
  return compile_tn(tenet::testing::read_file(tenet::testing::source_path(path)));
}

bool calls_gemm(const std::string& source) {
  return source.find("tenet::gemm(") != std::string::npos;
}

TEST(ContractionJit, Matmul) {
  const std::string source = expect_gemm_matches_interpreter(model("models/matmul.tn"), "matmul",
                                                             {{"M", 70}, {"K", 50}, {"N", 40}}, 1);
  EXPECT_TRUE(calls_gemm(source));
  EXPECT_NE(source.find("#include \"tenet_gemm.h\""), std::string::npos);
}

TEST(ContractionJit, BatchedMatmul) {
  ir::Module m = compile_tn(
      "def bmm(float(B, M, K) x, float(B, K, N) y) -> (z) {\n"
      "  z(b, i, j) +=! x(b, i, k) * y(b, k, j)\n"
      "}\n");
  expect_gemm_matches_interpreter(m, "bmm", {{"B", 3}, {"M", 40}, {"K", 45}, {"N", 50}}, 1);
}

TEST(ContractionJit, AddsOntoAnInit) {
  // C in place with an init: the init is copied into C, the GEMM adds (beta = 1).
  ir::Module m = compile_tn(
      "def accumulate(float(M, K) x, float(K, N) y, float(M, N) start) -> (z) {\n"
      "  z(i, j) = start(i, j) * 2\n"
      "  z(i, j) += x(i, k) * y(k, j)\n"
      "}\n");
  const std::string source =
      expect_gemm_matches_interpreter(m, "accumulate", {{"M", 40}, {"K", 45}, {"N", 50}}, 1);
  EXPECT_NE(source.find("1.0f, t_z, t_z_stride0);"), std::string::npos) << "beta = 1 onto z";
}

TEST(ContractionJit, Linear) {
  expect_gemm_matches_interpreter(model("models/linear.tn"), "linear",
                                  {{"B", 64}, {"I", 48}, {"O", 40}}, 1);
}

TEST(ContractionJit, ConvStride1OneGemmPerImage) {
  // O = 130 rows and 18 x 18 columns per image: a GEMM per image, im2col packed.
  expect_gemm_matches_interpreter(
      model("models/conv2d.tn"), "conv2d",
      {{"B", 2}, {"C", 6}, {"H", 20}, {"W", 20}, {"O", 130}, {"KH", 3}, {"KW", 3}}, 1);
}

TEST(ContractionJit, ConvStride2) {
  expect_gemm_matches_interpreter(model("models/conv2d.tn"), "conv2d_stride2",
                                  {{"B", 2}, {"C", 3}, {"H", 21}, {"W", 20}, {"O", 8}}, 1);
}

TEST(ContractionJit, CapsuleTransform) {
  // 1280 * B multiply-adds per GEMM: B = 64 passes the threshold.
  expect_gemm_matches_interpreter(
      model("models/capsule_transform.tn"), "capsule_transform",
      {{"B", 64}, {"T", 2}, {"Y", 2}, {"X", 1}, {"D", 8}, {"K", 10}, {"E", 16}}, 1);
}

TEST(ContractionJit, Decoder) {
  ir::Module m = compile_tn(
      "def decoder(float(B, 10, 16) masked, float(512, 10, 16) w1, float(28, 28, 512) w3)\n"
      "    -> (h3) {\n"
      "  h1(b, o) +=! masked(b, k, e) * w1(o, k, e)\n"
      "  h3(b, y, x) +=! h1(b, i) * w3(y, x, i)\n"
      "}\n");
  expect_gemm_matches_interpreter(m, "decoder", {{"B", 3}}, 2);
}

TEST(ContractionJit, PackedResultsGuardedPacksAndInits) {
  // Constant sizes: every decision is made at compile time. y, y2, d_w, d_x,
  // d_x.1 (the library's sum, then its init added) and d_x3 are convolutions
  // small enough for the convolution library (passes::kMaxLibraryConvWindow);
  // d_x2 (32 of w's 128 filters) is split into a GEMM into columns and a
  // gather. (The
  // GEMM plans of the library's convolutions are tested with symbolic
  // channels: ContractionGrad.)
  ir::Module m =
      ir::parse_ir(SourceFile::read(tenet::testing::source_path("tests/passes/contraction.ir")));
  const std::string conv = expect_gemm_matches_interpreter(m, "conv", {}, 7);
  size_t calls = 0;
  for (size_t at = conv.find("tenet::conv2d_"); at != std::string::npos;
       at = conv.find("tenet::conv2d_", at + 1))
    ++calls;
  EXPECT_EQ(calls, 6u);
  EXPECT_NE(conv.find("t_d_x2_cols"), std::string::npos);
  EXPECT_NE(conv.find("The sum starts from d_x"), std::string::npos);
  expect_gemm_matches_interpreter(m, "shapes", {}, 3);
}

TEST(ContractionJit, SmallContractionsStayLoops) {
  // Decided per call: below the threshold the generated code runs the loops.
  const std::string source = expect_gemm_matches_interpreter(model("models/matmul.tn"), "matmul",
                                                             {{"M", 4}, {"K", 3}, {"N", 5}}, 1);
  EXPECT_NE(source.find("} else {"), std::string::npos);
  // Decided at compile time: no GEMM at all.
  ir::Module m = compile_tn(
      "def small(float(8, 8) x, float(8, 8) y) -> (z) {\n"
      "  z(i, j) +=! x(i, k) * y(k, j)\n"
      "}\n");
  EXPECT_FALSE(calls_gemm(expect_gemm_matches_interpreter(m, "small", {}, 0)));
}

TEST(ContractionJit, Float64) {
  ir::Module m = compile_tn(
      "def mm64(float64(M, K) x, float64(K, N) y) -> (z) {\n"
      "  z(i, j) +=! x(i, k) * y(k, j)\n"
      "}\n");
  expect_gemm_matches_interpreter(m, "mm64", {{"M", 50}, {"K", 60}, {"N", 70}}, 1);
}

/// Sets an environment variable for the lifetime of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_)
      ::setenv(name_, old_.c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(ContractionJit, WithoutBlasTheHeaderLoopsRun) {
  ScopedEnv env("TENET_BLAS_LIBRARY", "none");
  expect_gemm_matches_interpreter(model("models/linear.tn"), "linear",
                                  {{"B", 64}, {"I", 48}, {"O", 40}}, 1, 11);
}

TEST(ContractionJit, MissingBlasIsAClearError) {
  ScopedEnv env("TENET_BLAS_LIBRARY", "/nonexistent/libopenblas.so.0");
  ir::Module m = model("models/matmul.tn");
  driver::optimise(m);
  try {
    driver::jit_compile(m, "matmul", test_jit_options());
    FAIL() << "no error for a missing BLAS";
  } catch (const BindError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("/nonexistent/libopenblas.so.0"), std::string::npos) << what;
    EXPECT_NE(what.find("libopenblas0-openmp"), std::string::npos) << what;
    EXPECT_NE(what.find("TENET_BLAS_LIBRARY=none"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace tenet::codegen::testing
