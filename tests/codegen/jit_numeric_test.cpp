// Compiled code against the interpreter, one test per language feature. All
// functions share one library (one compiler run, cached between test runs).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "driver/driver.h"
#include "ir/bind.h"
#include "jit/jit.h"
#include "tests/codegen/codegen_test_util.h"

namespace tenet::codegen::testing {
namespace {

const char* const kSource = R"(
def math(float(N) a, float(N) b) -> (y) {
  y(i) = exp(a(i)) + log(abs(b(i)) + 1) - sqrt(abs(a(i))) * tanh(b(i)) / sigmoid(a(i)) + pow(abs(a(i)), b(i)) + fmax(a(i), b(i)) - fmin(a(i), -b(i))
}

def math64(double(N) a, double(N) b) -> (y) {
  y(i) = exp(a(i)) * 0.1 + sigmoid(b(i)) - a(i) / (1 + b(i) * b(i)) + select(a(i) < b(i) && b(i) > 0.5, 1, -2.5)
}

def reductions(float(M, K) a, float(M) c) -> (s, mx, mn, acc) {
  s(m) +=! a(m, k)
  mx(m) max=! a(m, k)
  mn(m) min=! a(m, k)
  acc(m) = c(m)
  acc(m) += a(m, k) * a(m, k)
}

def stencil(float(H, W) x) -> (y, p) {
  y(i, j) = x?(i - 1, j) + x?(i + 1, j) + x?(i, j - 1) + x?(i, j + 1) - 4 * x(i, j)
  p(i, j) max=! x(2*i + ki, 2*j + kj) where ki in 0:2, kj in 0:2, i in 0:H/2, j in 0:W/2
}

def conv_stride2(float(B, C, H, W) x, float(O, C, 3, 3) w) -> (y) {
  y(b, o, i, j) +=! x(b, c, 2*i + ki, 2*j + kj) * w(o, c, ki, kj)
}

def floor_ranges(float(N) x) -> (s) {
  s(i) +=! x(i) * float32(k) where k in (N - 5) / 2 : N
}

def ints(int32(N) labels, float(N, C) logits, float alpha) -> (picked, count, scaled) {
  picked(n) +=! select(labels(n) == c, logits(n, c), 0)
  count +=! int64(labels(i) > 2)
  scaled(n, c) = alpha * logits(n, c) + float32(c)
}

def intmath(int32(N) a, int32(N) b, float(N) x) -> (q, m, t, n) {
  q(i) = (a(i) - 50) / (b(i) + 1)
  m(i) = fmax(a(i), b(i)) * -3 + fmin(a(i), 7)
  t(i) = int32(x(i) * 100)
  n(i) = abs(a(i) - 50) - a(i)
}

def narrow(int8(N) a, int8(N) b) -> (c) {
  c(i) = a(i) * b(i) + a(i) - b(i)
}

def scalars(float x, float(N) v) -> (s, y) {
  s +=! v(i) * x
  y(i) = v(i) - s
}

def routing(float(B, N) u) -> (b, s) {
  b(i, n) = 0 * u(i, n)
  for it in 0:3 {
    s(i) +=! u(i, n) * sigmoid(b(i, n))
    b(i, n) = b(i, n) + u(i, n) * s(i)
  }
}
)";

class JitNumeric : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    module_ = new ir::Module(compile_tn(kSource));
    std::vector<std::string> names;
    for (const auto& f : module_->functions) names.push_back(f.name);
    auto compiled = driver::jit_compile_together(*module_, names, test_jit_options());
    functions_ = new std::map<std::string, jit::CompiledFunction>();
    for (size_t i = 0; i < names.size(); ++i) functions_->emplace(names[i], compiled[i]);
  }
  static void TearDownTestSuite() {
    delete functions_;
    delete module_;
  }
  static const jit::CompiledFunction& fn(const std::string& name) { return functions_->at(name); }

  static ir::Module* module_;
  static std::map<std::string, jit::CompiledFunction>* functions_;
};
ir::Module* JitNumeric::module_ = nullptr;
std::map<std::string, jit::CompiledFunction>* JitNumeric::functions_ = nullptr;

TEST_F(JitNumeric, ElementwiseMath) {
  expect_matches_interpreter(fn("math"), {{"N", 1000}}, 1);
  expect_matches_interpreter(fn("math64"), {{"N", 1000}}, 2, 1e-12);
}

TEST_F(JitNumeric, EveryReductionAndInit) {
  expect_matches_interpreter(fn("reductions"), {{"M", 7}, {"K", 300}}, 3);
  expect_matches_interpreter(fn("reductions"), {{"M", 3}, {"K", 0}}, 4);  // identities
}

TEST_F(JitNumeric, GuardedAndStridedReads) {
  expect_matches_interpreter(fn("stencil"), {{"H", 9}, {"W", 12}}, 5);
  expect_matches_interpreter(fn("stencil"), {{"H", 1}, {"W", 1}}, 6);
}

TEST_F(JitNumeric, SymbolicSizesAreEvaluatedAtRunTime) {
  // One library, several shapes; H = 2 makes (H - 3) / 2 + 1 = 0 only with
  // floor division (C's '/' would give 1 and read out of bounds).
  expect_matches_interpreter(fn("conv_stride2"),
                             {{"B", 2}, {"C", 3}, {"H", 11}, {"W", 8}, {"O", 4}}, 7);
  expect_matches_interpreter(fn("conv_stride2"), {{"B", 1}, {"C", 5}, {"H", 4}, {"W", 3}, {"O", 2}},
                             8);
  expect_matches_interpreter(fn("conv_stride2"), {{"B", 1}, {"C", 1}, {"H", 2}, {"W", 5}, {"O", 1}},
                             9);
  auto out = fn("conv_stride2")
                 .run(ir::random_inputs(fn("conv_stride2").function(),
                                        {{"B", 1}, {"C", 1}, {"H", 2}, {"W", 5}, {"O", 1}}, 9));
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{1, 1, 0, 2}));
  // A range starting at (N - 5) / 2: -2 for N = 2 with floor division, -1 with C's.
  expect_matches_interpreter(fn("floor_ranges"), {{"N", 2}}, 16);
  expect_matches_interpreter(fn("floor_ranges"), {{"N", 9}}, 17);
}

TEST_F(JitNumeric, SelectCastsIntegersAndScalars) {
  expect_matches_interpreter(fn("ints"), {{"N", 40}, {"C", 6}}, 10);
  expect_matches_interpreter(fn("intmath"), {{"N", 300}}, 11, 0, 100);
  expect_matches_interpreter(fn("scalars"), {{"N", 50}}, 12);
}

TEST_F(JitNumeric, NarrowIntegersWrapLikeTheInterpreter) {
  // Products of values up to 99 overflow int8: both sides must wrap the same way.
  expect_matches_interpreter(fn("narrow"), {{"N", 200}}, 13, 0, 100);
}

TEST_F(JitNumeric, LoopsWithCarriedTensorsAndLiveOuts) {
  expect_matches_interpreter(fn("routing"), {{"B", 3}, {"N", 17}}, 14);
}

TEST_F(JitNumeric, LargeStatementsRunInParallelAndStayDeterministic) {
  // Big enough for the OpenMP pragmas to engage; two runs give identical bits.
  const jit::CompiledFunction& f = fn("reductions");
  auto inputs = ir::random_inputs(f.function(), {{"M", 300}, {"K", 500}}, 15);
  auto first = f.run(inputs);
  auto second = f.run(inputs);
  for (size_t i = 0; i < first.size(); ++i) expect_close(second[i], first[i], 0, "rerun");
  expect_matches_interpreter(f, {{"M", 300}, {"K", 500}}, 15);
}

// Issue 13: literals at the edges of their types compile (1e39 used to
// print as "inf.0f") and equal the interpreter's: the largest float32, its
// smallest subnormal, a double beyond float32, the ends of int8.
TEST(JitLiterals, ExtremeLiteralsMatchTheInterpreter) {
  ir::Module m = compile_tn(
      "def extremes(float(N) x, double(N) d, int8(N) c) -> (y, big, small, w, z) {\n"
      "  y(i) = x(i) * 1e-45 + 3.4028234e38\n"
      "  big(i) = select(x(i) < 2, 3.4028235e38, -3.4028235e38)\n"
      "  small(i) = x(i) * 0 + 1e-45 + 1.17549435e-38\n"
      "  w(i) = d(i) * 1e39 + 4.9406564584124654e-324 + 1.7976931348623157e308\n"
      "  z(i) = select(c(i) > -128, c(i) - 1, 127)\n"
      "}\n");
  jit::CompiledFunction f = driver::jit_compile(m, "extremes", test_jit_options());
  expect_matches_interpreter(f, {{"N", 6}}, 4, 0);
  const std::string source = f.source_path().empty() ? "" : [&] {
    std::ifstream in(f.source_path());
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  EXPECT_NE(source.find("1e-45f"), std::string::npos) << source;
  EXPECT_NE(source.find("3.4028235e38f"), std::string::npos) << source;
  EXPECT_NE(source.find("5e-324"), std::string::npos) << source;
}

}  // namespace
}  // namespace tenet::codegen::testing
