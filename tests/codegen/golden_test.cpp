// The generated C++ of three canonical kernels, pinned so that every change to
// its text is reviewed (TENET_UPDATE_GOLDENS=1 rewrites them).
#include <gtest/gtest.h>

#include "codegen/cpp.h"
#include "driver/driver.h"
#include "ir/bind.h"
#include "jit/jit.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/support/golden.h"

namespace tenet::codegen::testing {
namespace {

const char* const kSoftmax = R"(
def softmax_last(float(N, K) z) -> (p) {
  m(n) max=! z(n, k)
  e(n, k) = exp(z(n, k) - m(n))
  t(n) +=! e(n, k)
  p(n, k) = e(n, k) / t(n)
}
)";

const char* const kConv = R"(
def conv_stride2(float(B, C, H, W) x, float(O, C, 9, 9) w) -> (y) {
  y(b, o, i, j) +=! x(b, c, 2*i + ki, 2*j + kj) * w(o, c, ki, kj)
}
)";

TEST(CppGolden, Softmax) {
  ir::Module m = compile_tn(kSoftmax);
  CppOptions options;
  options.origin = "softmax.tn";
  CppUnit unit = driver::emit_cpp(m, {}, options);
  EXPECT_EQ(unit.header_name, "tenet_softmax_last.h");
  EXPECT_EQ(unit.source_name, "tenet_softmax_last.cpp");
  tenet::testing::expect_golden("codegen/softmax_last.h.expected", unit.header);
  tenet::testing::expect_golden("codegen/softmax_last.cpp.expected", unit.source);
  // The pinned code is also right.
  jit::CompiledFunction f = driver::jit_compile(m, "softmax_last", test_jit_options());
  expect_matches_interpreter(f, {{"N", 9}, {"K", 31}}, 1);
}

/// `source`'s C++ (with `origin` as its file name) equals the golden
/// codegen/<fn>.cpp.expected, and the pinned code is right: its function `fn`
/// agrees with the interpreter at `sizes`.
void expect_pinned_and_right(const char* source, const std::string& fn, const std::string& origin,
                             const std::string& golden, const ir::SizeBindings& sizes,
                             uint64_t seed) {
  ir::Module m = compile_tn(source);
  CppOptions options;
  options.origin = origin;
  tenet::testing::expect_golden("codegen/" + golden + ".cpp.expected",
                                driver::emit_cpp(m, {}, options).source);
  jit::CompiledFunction f = driver::jit_compile(m, fn, test_jit_options());
  expect_matches_interpreter(f, sizes, seed);
}

TEST(CppGolden, ConvolutionWithStride2) {
  expect_pinned_and_right(kConv, "conv_stride2", "conv.tn", "conv_stride2",
                          {{"B", 2}, {"C", 2}, {"H", 12}, {"W", 10}, {"O", 3}}, 2);
}

// A reverse cumsum: a scan down its row (lower/loops_scan.cpp).
const char* const kSuffix = R"(
def suffix_sums(float(B, N) x) -> (y) {
  y(b, i) +=! x(b, k) where k in i:N, i in 0:N
}
)";

TEST(CppGolden, SuffixSumsScanDownwards) {
  expect_pinned_and_right(kSuffix, "suffix_sums", "suffix.tn", "suffix_sums", {{"B", 3}, {"N", 37}},
                          4);
}

// A flatten and a split back: the flatten of an input is a view (a pointer,
// no copy); the reshape that is an output is a copy, whose indices are not
// checked (in bounds by construction).
const char* const kReshape = R"(
def flatten(float(B, C, H, W) x, float(O, C, H, W) w) -> (y, back) {
  flat = reshape(x, B, C * H * W)
  wf = reshape(w, O, C * H * W)
  y(b, o) +=! flat(b, k) * wf(o, k)
  back = reshape(flat, B, C, H, W)
}
)";

TEST(CppGolden, ReshapeViewsAndCopies) {
  expect_pinned_and_right(kReshape, "flatten", "flatten.tn", "reshape_flatten",
                          {{"B", 2}, {"C", 3}, {"H", 4}, {"W", 5}, {"O", 3}}, 3);
}

TEST(CppGolden, WithoutOpenMP) {
  CppOptions options;
  options.openmp = false;
  std::string source = driver::emit_cpp(compile_tn(kSoftmax), {}, options).source;
  EXPECT_EQ(source.find("#pragma omp"), std::string::npos);
}

}  // namespace
}  // namespace tenet::codegen::testing
