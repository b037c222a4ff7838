// The gradcheck helper itself: it catches a wrong gradient, treats kinks
// honestly, samples large inputs and prints a table.
#include <gtest/gtest.h>

#include <cmath>

#include "ad/gradcheck.h"
#include "ir/builder.h"
#include "support/error.h"
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
  EXPECT_EQ(r.inputs.at(0).problem.rfind("x[0]: gradient nan, finite differences ", 0), 0u)
      << r.inputs.at(0).problem;
  EXPECT_NE(format_report(r).find("\nerror: x[0]: gradient nan"), std::string::npos)
      << format_report(r);
}

Tensor vector_of(std::initializer_list<double> values) {
  Tensor t(ElemType::F32, {int64_t(values.size())});
  int64_t i = 0;
  for (double v : values) t.set(i++, v);
  return t;
}

// A NaN compares false with everything: a max or a <= over one must not let
// the check pass (it did: a NaN finite difference gave a relative error of 0).
TEST(Gradcheck, ANaNLossFails) {
  const char* src = "def f(float(N) x) -> (y) {\n  y +=! log(x(i))\n}\n";
  ir::Function fn = compile_fn(src, "f");
  GradcheckOptions opt;
  opt.inputs = {vector_of({0.5, -0.5})};  // log(-0.5) is NaN; the gradient 1/x is finite
  GradcheckReport r = gradcheck(fn, opt);
  EXPECT_FALSE(r.pass) << format_report(r);
  ASSERT_FALSE(r.errors.empty());
  EXPECT_EQ(r.errors[0],
            "the checked function is nan at the inputs: finite differences of it mean nothing "
            "(inputs outside its domain?)");
  EXPECT_FALSE(r.inputs.at(0).pass);
  EXPECT_TRUE(std::isinf(r.inputs.at(0).max_rel));
}

TEST(Gradcheck, ANaNFiniteDifferenceFails) {
  // log at 1e-7: the loss is finite, but x - h is negative, so the central and
  // the lower one-sided difference are NaN while the gradient (1e7) is not.
  const char* src = "def f(float(N) x) -> (y) {\n  y +=! log(x(i))\n}\n";
  ir::Function fn = compile_fn(src, "f");
  GradcheckOptions opt;
  Tensor x(ElemType::F64, {2});
  x.set(0, 0.5);
  x.set(1, 1e-7);
  opt.inputs = {x};
  GradcheckReport r = gradcheck(fn, opt);
  EXPECT_FALSE(r.pass) << format_report(r);
  EXPECT_EQ(r.inputs.at(0).problem.rfind("x[1]: gradient 1e+07, finite differences nan (central), "
                                         "nan and ",
                                         0),
            0u)
      << r.inputs.at(0).problem;
  EXPECT_TRUE(std::isinf(r.inputs.at(0).max_rel));
  EXPECT_NE(format_report(r).find("  NO\n"), std::string::npos) << format_report(r);
}

TEST(Gradcheck, AnInfiniteLossFails) {
  const char* src = "def f(float(N) x) -> (y) {\n  y +=! exp(x(i))\n}\n";
  ir::Function fn = compile_fn(src, "f");
  GradcheckOptions opt;
  Tensor x(ElemType::F64, {2});
  x.set(0, 0.5);
  x.set(1, 1000);  // exp(1000) overflows float64
  opt.inputs = {x};
  GradcheckReport r = gradcheck(fn, opt);
  EXPECT_FALSE(r.pass) << format_report(r);
  ASSERT_FALSE(r.errors.empty());
  EXPECT_EQ(r.errors[0].rfind("the checked function is inf at the inputs", 0), 0u) << r.errors[0];
  // inf - inf: every finite difference is NaN.
  EXPECT_EQ(r.inputs.at(0).problem.rfind("x[0]: gradient 1.65, finite differences nan", 0), 0u)
      << r.inputs.at(0).problem;
}

TEST(Gradcheck, RejectsOptionsOutOfRange) {
  ir::Function fn = compile_fn(kSquare, "f");
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = {{"N", 3}};
  struct Case {
    double step, tolerance;
    int64_t max_entries;
    const char* message;
  };
  const Case cases[] = {
      {NAN, 1e-4, 0, "gradcheck: the step must be a positive number, not nan"},
      {0, 1e-4, 0, "gradcheck: the step must be a positive number, not 0"},
      {INFINITY, 1e-4, 0, "gradcheck: the step must be a positive number, not inf"},
      {1e-6, NAN, 0, "gradcheck: the tolerance must be a non-negative number, not nan"},
      {1e-6, -1, 0, "gradcheck: the tolerance must be a non-negative number, not -1"},
      {1e-6, 1e-4, -2, "gradcheck: max_entries must be non-negative (0: all), not -2"},
  };
  for (const Case& c : cases) {
    opt.step = c.step;
    opt.tolerance = c.tolerance;
    opt.max_entries = c.max_entries;
    try {
      gradcheck(fn, opt);
      ADD_FAILURE() << "no error for " << c.message;
    } catch (const BindError& e) {
      EXPECT_EQ(std::string(e.what()), c.message);
    }
  }
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
