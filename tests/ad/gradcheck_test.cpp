// The gradcheck helper itself: it catches a wrong gradient, treats kinks
// honestly, samples large inputs and prints a table.
#include <gtest/gtest.h>

#include <cmath>

#include "ad/gradcheck.h"
#include "ir/builder.h"
#include "tests/ad/ad_test_util.h"

namespace tenet::ad::testing {
namespace {

using ir::Affine;

const char* kSquare = "def f(float(N) x) -> (out) {\n  out(i) = x(i) * x(i)\n}\n";

// The gradient of out(i) = x(i)^2 with `factor` instead of 2.
ir::Function square_gradient(double factor) {
  ir::FunctionBuilder fb("f_grad");
  ir::SizeExpr N = ir::SizeExpr::sym("N");
  auto x = fb.input("x", ElemType::F32, {N});
  auto d_out = fb.input("d_out", ElemType::F32, {N});
  auto xi = ir::make_read(x, {Affine::var("i")});
  fb.output(fb.compute("out", {{"i", 0, N}}, {}, ir::ReduceOp::None,
                       ir::make_binary(ir::BinOp::Mul, xi, xi)));
  auto g = ir::make_binary(
      ir::BinOp::Mul, ir::make_const(factor, ElemType::F32),
      ir::make_binary(ir::BinOp::Mul, ir::make_read(d_out, {Affine::var("i")}), xi));
  fb.output(fb.compute("d_x", {{"i", 0, N}}, {}, ir::ReduceOp::None, g));
  return fb.finish();
}

TEST(Gradcheck, CatchesAWrongGradient) {
  ir::Function fn = compile_fn(kSquare, "f");
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = {{"N", 6}};
  ir::Function right = square_gradient(2), wrong = square_gradient(2.002);
  opt.gradient = &right;
  EXPECT_TRUE(gradcheck(fn, opt).pass);
  opt.gradient = &wrong;  // 0.1% off
  GradcheckReport r = gradcheck(fn, opt);
  EXPECT_FALSE(r.pass);
  ASSERT_EQ(r.inputs.size(), 1u);
  EXPECT_NEAR(r.inputs[0].max_rel, 0.002 / 2.002, 1e-7);
  EXPECT_NEAR(r.inputs[0].worst_ad / r.inputs[0].worst_fd, 1.001, 1e-7);
}

TEST(Gradcheck, ANaNGradientFails) {
  ir::Function fn = compile_fn(kSquare, "f");
  ir::Function nan_gradient = square_gradient(NAN);
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = {{"N", 3}};
  opt.gradient = &nan_gradient;
  GradcheckReport r = gradcheck(fn, opt);
  EXPECT_FALSE(r.pass);
  EXPECT_TRUE(std::isinf(r.inputs.at(0).max_rel));
}

TEST(Gradcheck, WarnsAtAReluKinkAndPasses) {
  const char* src = "def relu(float(N) x) -> (y) {\n  y(i) = fmax(x(i), 0.0) * 3\n}\n";
  GradcheckOptions opt;
  opt.request.vjp = true;
  Tensor x(ElemType::F32, {4});
  x.set(0, -0.5);
  x.set(1, 0);  // exactly at the kink
  x.set(2, 0.25);
  x.set(3, 0);
  opt.inputs = {x};
  GradcheckReport r = expect_gradcheck(src, "relu", opt);
  EXPECT_EQ(r.inputs.at(0).kinks, 2);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("first x[1]"), std::string::npos) << r.warnings[0];
  EXPECT_NE(format_report(r).find("warning: x: 2 entries at non-differentiable points"),
            std::string::npos);
}

TEST(Gradcheck, SamplesEntriesAndPrintsATable) {
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = {{"N", 100}};
  opt.max_entries = 7;
  GradcheckReport r = expect_gradcheck(kSquare, "f", opt);
  EXPECT_EQ(r.inputs.at(0).checked, 7);
  std::string table = format_report(r);
  EXPECT_EQ(table.substr(0, table.find('\n')),
            "input             entries  max abs err  max rel err  pass");
  EXPECT_EQ(table.find("x                       7"), table.find('\n') + 1) << table;
  EXPECT_NE(table.find("  yes\n"), std::string::npos) << table;
}

}  // namespace
}  // namespace tenet::ad::testing
