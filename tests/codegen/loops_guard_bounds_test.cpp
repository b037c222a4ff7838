// Reduce loops narrowed by the guards of their bodies (lower/loop_bounds.h):
// compiled code matches the interpreter for guards of every shape (strides
// 2 and 3, windows wider than the stride, negative offsets, bounds through
// two reduce indices, sizes where a range is empty), for the gathers AD makes
// of strided, padded and transposed reads, and for guarded reads; and the
// narrowed loops are what is emitted (the guard leaves the loop body; a
// golden of the max-pool gradient).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ad/grad.h"
#include "codegen/cpp.h"
#include "driver/driver.h"
#include "ir/bind.h"
#include "ir/builder.h"
#include "ir/interp.h"
#include "jit/jit.h"
#include "lang/check.h"
#include "runtime/tenet_runtime.h"
#include "support/diagnostics.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/support/golden.h"

namespace tenet::codegen::testing {
namespace {

const char* const kGuards = R"(
def stride2(float(Y) d) -> (g) {
  g(h) +=! select(h - 2*y >= 0 && h - 2*y < 2, d(y), 0) where h in 0:H
}

def stride3_wide(float(Y) d) -> (g) {
  g(h) +=! select(h - 3*y >= -1 && h - 3*y < 4, d(y), 0) where h in 0:H
}

def flipped(float(Y, X) d) -> (g) {
  g(h, w) +=! select(2*y <= h + 1 && h < 2*y + 2 && 3*x - w < 2 && w - 3*x <= 1 && x > 0, d(y, x), 0)
      where h in 0:H, w in 0:W
}

def triangle(float(Y, K) d) -> (g) {
  g(h) +=! select(y + k < h && k >= 1 && y >= h - 5 && d(y, k) > 0, d(y, k), 0) where h in 0:H
}

def kept(float(Y) d) -> (g) {
  g(h) +=! select(h >= 2 && h - y >= 0, d(y), 0) where h in 0:H
}

def gather(float(Y, K) cols) -> (g) {
  g(h) +=! cols?(y, h - 2*y + 1) where h in 0:H, y in 0:Y
}

def product(float(Y) d, float(K) w) -> (g, q) {
  g(h) +=! d(y) * w?(h - 2*y) where h in 0:H
  q(h) +=! d(y) / 2 * w?(h - 2*y) where h in 0:H
}

def nested(float(Y) d, float(Y) m) -> (g) {
  g(h) +=! select(h - 2*y >= 0, select(m(y) > 0 && h - 2*y < 3, d(y), 0), 0) where h in 0:H
}
)";

class GuardBounds : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    module_ = new ir::Module(compile_tn(kGuards));
    std::vector<std::string> names;
    for (const auto& f : module_->functions) names.push_back(f.name);
    auto compiled = driver::jit_compile_together(*module_, names, test_jit_options());
    functions_ = new std::map<std::string, jit::CompiledFunction>();
    for (size_t i = 0; i < names.size(); ++i) functions_->emplace(names[i], compiled[i]);
    source_ = new std::string(driver::emit_cpp(*module_).source);
  }
  static void TearDownTestSuite() {
    delete functions_;
    delete module_;
    delete source_;
  }
  static const jit::CompiledFunction& fn(const std::string& name) { return functions_->at(name); }
  /// The generated body of `name` (its __with_workspace definition).
  static std::string body(const std::string& name) {
    const size_t begin = source_->find("extern \"C\" void tenet_" + name + "__with_workspace(");
    EXPECT_NE(begin, std::string::npos) << name;
    return source_->substr(begin, source_->find("\n}\n", begin) - begin);
  }

  static ir::Module* module_;
  static std::map<std::string, jit::CompiledFunction>* functions_;
  static std::string* source_;
};
ir::Module* GuardBounds::module_ = nullptr;
std::map<std::string, jit::CompiledFunction>* GuardBounds::functions_ = nullptr;
std::string* GuardBounds::source_ = nullptr;

TEST(GuardBoundsRuntime, CeilAndFloorDivisionOfNegativeValues) {
  for (int64_t b : {1, 2, 3, 7}) {
    for (int64_t a = -15; a <= 15; ++a) {
      const double exact = double(a) / double(b);
      EXPECT_EQ(tenet::ceildiv<int64_t>(a, b), int64_t(std::ceil(exact))) << a << " / " << b;
      EXPECT_EQ(tenet::floordiv<int64_t>(a, b), int64_t(std::floor(exact))) << a << " / " << b;
    }
  }
}

TEST_F(GuardBounds, StridesWindowsAndNegativeOffsetsMatchTheInterpreter) {
  // Odd and even sizes; H beyond the last window (empty ranges at the end);
  // Y = 0 (every range empty). The sums skip only zero terms and keep the
  // interpreter's order: bit for bit its results (tolerance 0).
  for (int64_t h : {1, 2, 7, 8, 13}) {
    for (int64_t y : {0, 1, 3, 4}) {
      SCOPED_TRACE("H=" + std::to_string(h) + " Y=" + std::to_string(y));
      expect_matches_interpreter(fn("stride2"), {{"H", h}, {"Y", y}}, 1, 0);
      expect_matches_interpreter(fn("stride3_wide"), {{"H", h}, {"Y", y}}, 2, 0);
      expect_matches_interpreter(fn("flipped"), {{"H", h}, {"W", h + 2}, {"Y", y}, {"X", y + 1}}, 3,
                                 0);
      expect_matches_interpreter(fn("triangle"), {{"H", h}, {"Y", y}, {"K", 3}}, 4, 0);
      expect_matches_interpreter(fn("kept"), {{"H", h}, {"Y", y}}, 5, 0);
      expect_matches_interpreter(fn("gather"), {{"H", h}, {"Y", y}, {"K", 3}}, 6, 0);
      expect_matches_interpreter(fn("nested"), {{"H", h}, {"Y", y}}, 7, 0);
      expect_matches_interpreter(fn("product"), {{"H", h}, {"Y", y}, {"K", 3}}, 8, 0);
    }
  }
}

TEST_F(GuardBounds, TheGuardBecomesLoopBounds) {
  // h - 2*y >= 0 and h - 2*y < 2: y from ceil((h - 1) / 2) (never below 0:
  // h >= 0) to floor(h / 2).
  const std::string stride2 = body("stride2");
  EXPECT_NE(stride2.find("t_y = tenet::ceildiv<int64_t>(t_h - 1, 2);"), std::string::npos)
      << stride2;
  EXPECT_NE(stride2.find("std::min<int64_t>(t_Y, tenet::floordiv<int64_t>(t_h, 2) + 1)"),
            std::string::npos)
      << stride2;
  EXPECT_NE(stride2.find("acc += t_d[t_y];"), std::string::npos) << stride2;
  // Coefficients of both signs, Le and Gt, and x > 0 as a plain lower bound.
  const std::string flipped = body("flipped");
  EXPECT_EQ(flipped.find("?"), std::string::npos) << flipped;
  EXPECT_NE(flipped.find("tenet::ceildiv<int64_t>(t_w - 1, 3)"), std::string::npos) << flipped;
  // y + k < h bounds k (the inner loop) by y; the read of d stays a test.
  const std::string triangle = body("triangle");
  EXPECT_NE(triangle.find("t_k < std::min<int64_t>(t_K, t_h - t_y)"), std::string::npos)
      << triangle;
  EXPECT_NE(triangle.find("tenet::select<float>(t_d[t_y * t_d_stride0 + t_k] > 0.0f,"),
            std::string::npos)
      << triangle;
  // h >= 2 has no reduce index: it stays; h - y >= 0 bounds y.
  const std::string kept = body("kept");
  EXPECT_NE(kept.find("t_y < std::min<int64_t>(t_Y, t_h + 1)"), std::string::npos) << kept;
  EXPECT_NE(kept.find("acc += tenet::select<float>(t_h >= 2, t_d[t_y], 0.0f);"), std::string::npos)
      << kept;
  // A guarded read whose bounds check involves y: the read becomes plain.
  const std::string gather = body("gather");
  EXPECT_EQ(gather.find("in_bounds"), std::string::npos) << gather;
  // A guarded factor of a product bounds y; not when another factor divides
  // (it could be infinite, and inf * 0 is NaN, not 0).
  const std::string product = body("product");
  EXPECT_NE(product.find("acc += t_d[t_y] * t_w[t_h - 2 * t_y];"), std::string::npos) << product;
  EXPECT_NE(product.find("tenet::in_bounds(t_h - 2 * t_y, t_K)"), std::string::npos) << product;
  // The inner select's affine conjunct bounds y too; m(y) > 0 stays.
  const std::string nested = body("nested");
  EXPECT_NE(nested.find("tenet::select<float>(t_m[t_y] > 0.0f, t_d[t_y], 0.0f)"), std::string::npos)
      << nested;
}

ir::Module gradient_of_module(const ir::Module& m, const std::string& fn) {
  ad::GradRequest req;
  req.vjp = true;
  ir::Module out;
  out.functions.push_back(ad::differentiate(m, fn, req));
  return out;
}

ir::Module gradient_of(const std::string& path, const std::string& fn) {
  return gradient_of_module(
      lang::compile_source(SourceFile::read(tenet::testing::source_path(path))), fn);
}

/// The gradient of a zoo model compiled as loops (no GEMM lowering), against
/// the interpreter, at several sizes; returns the generated code.
std::string expect_gradient_matches(const std::string& model,
                                    const std::vector<ir::SizeBindings>& sizes,
                                    double tolerance = 0) {
  SCOPED_TRACE(model);
  ir::Module g = gradient_of("models/zoo/" + model + ".tn", model);
  jit::CompiledFunction f = driver::jit_compile(g, model + "_grad", test_jit_options());
  for (size_t i = 0; i < sizes.size(); ++i)
    expect_matches_interpreter(f, sizes[i], 10 + i, tolerance);
  return driver::emit_cpp(g).source;
}

TEST(GuardBoundsGradients, PoolingGradientsSumOnlyTheirWindows) {
  const std::vector<ir::SizeBindings> sizes = {{{"B", 2}, {"C", 3}, {"H", 7}, {"W", 6}},
                                               {{"B", 1}, {"C", 2}, {"H", 2}, {"W", 9}},
                                               {{"B", 1}, {"C", 1}, {"H", 1}, {"W", 5}}};
  // Only terms that are exactly 0 are skipped, and the rest are summed in the
  // interpreter's order: the results are the interpreter's, bit for bit.
  // The average pool's gradient sums only the windows that cover a pixel; the
  // max pool's adds each window's one term where its argmax points (a scatter).
  for (const char* model : {"maxpool2x2", "avgpool2x2"}) {
    const std::string source = expect_gradient_matches(model, sizes, 0);
    EXPECT_EQ(source.find("t_h - 2 * t_y >= 0"), std::string::npos) << source;
    const bool max = std::string(model) == "maxpool2x2";
    EXPECT_EQ(source.find("only where the guard holds") != std::string::npos, !max) << source;
    EXPECT_EQ(source.find("As a scatter") != std::string::npos, max) << source;
  }
}

TEST(GuardBoundsGradients, MaxPoolGradientGolden) {
  // The gradient program as AD writes it (no pass pipeline): each window's
  // gradient added where its argmax points.
  const std::string source =
      driver::emit_cpp(gradient_of("models/zoo/maxpool2x2.tn", "maxpool2x2")).source;
  const size_t begin = source.find("extern \"C\" void tenet_maxpool2x2_grad__with_workspace(");
  ASSERT_NE(begin, std::string::npos);
  const size_t end = source.find("\n}\n", begin);
  ASSERT_NE(end, std::string::npos);
  tenet::testing::expect_golden("codegen/maxpool2x2_grad_loops.cpp.expected",
                                source.substr(begin, end + 3 - begin));
}

TEST(GuardBoundsGradients, OverlappingMaxPoolGradientScattersLikeTheInterpreter) {
  // ResNet's max pool: 3x3 windows of stride 2, padded by 1. A pixel on a
  // window's border belongs to two or four windows; the scatter adds their
  // terms in window order, as the interpreter sums them: the same bits, also
  // where threads split the images (B * C * 4 * 4 terms >= 32768) and when
  // run twice. Inputs rounded to quarters make ties (the first position wins).
  const ir::Module m = compile_tn(R"(
def pool3(float(B, C, H, W) x) -> (y) {
  y(b, c, k, l) max=! select(2*k + r - 1 >= 0 && 2*k + r - 1 < H && 2*l + s - 1 >= 0 && 2*l + s - 1 < W,
      x?(b, c, 2*k + r - 1, 2*l + s - 1), -3.4e38)
      where r in 0:3, s in 0:3, k in 0:(H + 1) / 2, l in 0:(W + 1) / 2, b in 0:B, c in 0:C
}
)");
  const ir::Module g = gradient_of_module(m, "pool3");
  jit::CompiledFunction f = driver::jit_compile(g, "pool3_grad", test_jit_options());
  const ir::Function& fn = f.function();
  for (const ir::SizeBindings& sizes : std::vector<ir::SizeBindings>{
           {{"B", 2}, {"C", 3}, {"H", 7}, {"W", 8}}, {{"B", 64}, {"C", 32}, {"H", 8}, {"W", 8}}}) {
    std::vector<Tensor> inputs = ir::random_inputs(fn, sizes, 21);
    ASSERT_EQ(fn.inputs[0]->name, "x");
    Tensor& x = inputs[0];
    int64_t ties = 0;
    for (int64_t k = 0; k < x.numel(); ++k) x.set(k, std::floor(x.get(k) * 4) / 4);
    const std::vector<Tensor> expected = ir::interpret(fn, inputs, sizes);
    const std::vector<Tensor> first = f.run(inputs, sizes), second = f.run(inputs, sizes);
    ASSERT_EQ(first.size(), 2u);
    for (size_t i = 0; i < first.size(); ++i) {
      expect_close(first[i], expected[i], 0, fn.outputs[i]->name);
      expect_close(second[i], first[i], 0, "rerun");
    }
    // By hand: each window's gradient added, in window order, to its first
    // largest pixel.
    const int64_t B = sizes.at("B"), C = sizes.at("C"), H = sizes.at("H"), W = sizes.at("W");
    const int64_t K = (H + 1) / 2, L = (W + 1) / 2;
    std::vector<float> dx(size_t(x.numel()), 0.0f);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t k = 0; k < K; ++k)
          for (int64_t l = 0; l < L; ++l) {
            int64_t best = -1;
            for (int64_t r = 0; r < 3; ++r)
              for (int64_t t = 0; t < 3; ++t) {
                const int64_t h = 2 * k + r - 1, w = 2 * l + t - 1;
                if (h < 0 || h >= H || w < 0 || w >= W) continue;
                const int64_t at = ((b * C + c) * H + h) * W + w;
                if (best < 0 || x.get(at) > x.get(best)) best = at;
                ties += best != at && x.get(at) == x.get(best);
              }
            dx[size_t(best)] += float(inputs[1].get(((b * C + c) * K + k) * L + l));
          }
    for (int64_t k = 0; k < x.numel(); ++k) ASSERT_EQ(first[1].get(k), double(dx[size_t(k)])) << k;
    EXPECT_GT(ties, 0);
  }
  EXPECT_NE(driver::emit_cpp(g).source.find("As a scatter"), std::string::npos);
}

TEST(GuardBoundsGradients, StridedPaddedAndTransposedConvolutionGradients) {
  // Their gathers read the weights through guarded factors (w?(o, c, h - 2*y,
  // w2 - 2*x)); the loops over y and x cover only the kernel's reach.
  const std::string stride2 = expect_gradient_matches(
      "conv2d_stride2", {{{"B", 1}, {"C", 2}, {"H", 9}, {"W", 8}, {"O", 3}, {"KH", 3}, {"KW", 2}},
                         {{"B", 2}, {"C", 1}, {"H", 5}, {"W", 5}, {"O", 2}, {"KH", 1}, {"KW", 4}}});
  EXPECT_EQ(stride2.find("in_bounds(t_h - 2 * t_y"), std::string::npos) << stride2;
  EXPECT_NE(stride2.find("tenet::ceildiv<int64_t>(t_h - t_KH + 1, 2)"), std::string::npos)
      << stride2;
  expect_gradient_matches("conv2d_padded", {{{"B", 1}, {"C", 2}, {"H", 5}, {"W", 4}, {"O", 3}},
                                            {{"B", 2}, {"C", 1}, {"H", 1}, {"W", 2}, {"O", 1}}});
  expect_gradient_matches("transposed_conv", {{{"B", 1}, {"C", 2}, {"H", 3}, {"W", 4}, {"O", 2}},
                                              {{"B", 1}, {"C", 1}, {"H", 1}, {"W", 1}, {"O", 1}}});
}

TEST(GuardBoundsBuilder, MaxWithMinusInfinityAsTheElseValue) {
  // m(h) max=! select(h - 2*y >= 0 && h - 2*y < 3, d(y), -inf): windows of 3
  // with stride 2 overlap; positions without a window stay -inf.
  ir::FunctionBuilder fb("window_max");
  ir::SizeExpr Y = ir::SizeExpr::sym("Y"), H = ir::SizeExpr::sym("H");
  ir::ValuePtr d = fb.input("d", ElemType::F32, {Y});
  fb.size_param("H");
  auto i64 = [](double v) { return ir::make_const(v, ElemType::I64); };
  ir::Expr off = ir::make_binary(ir::BinOp::Sub, ir::make_index("h"),
                                 ir::make_binary(ir::BinOp::Mul, i64(2), ir::make_index("y")));
  ir::Expr cond = ir::make_binary(ir::BinOp::And, ir::make_binary(ir::BinOp::Ge, off, i64(0)),
                                  ir::make_binary(ir::BinOp::Lt, off, i64(3)));
  ir::Expr body =
      ir::make_select(cond, ir::make_read(d, {ir::Affine::var("y")}),
                      ir::make_const(-std::numeric_limits<double>::infinity(), ElemType::F32));
  ir::ValuePtr m = fb.compute("m", {{"h", 0, H}}, {{"y", 0, Y}}, ir::ReduceOp::Max, body);
  fb.output(m);
  ir::Module mod;
  mod.functions.push_back(fb.finish());
  jit::CompiledFunction f = driver::jit_compile(mod, "window_max", test_jit_options());
  for (int64_t h : {1, 6, 9}) expect_matches_interpreter(f, {{"H", h}, {"Y", 3}}, 20, 0);
  const std::string source = driver::emit_cpp(mod).source;
  EXPECT_NE(source.find("tenet::ceildiv<int64_t>(t_h - 2, 2)"), std::string::npos) << source;
  EXPECT_EQ(source.find("t_h - 2 * t_y"), std::string::npos) << source;
}

}  // namespace
}  // namespace tenet::codegen::testing
