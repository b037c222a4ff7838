// IR the language does not write directly, built with the builders: max/min
// reductions with an init, declared float64 tensors, outputs that are inputs
// or listed twice, a tensor carried through a loop unchanged.
#include <gtest/gtest.h>

#include "ad/grad.h"
#include "ad/gradcheck.h"
#include "ir/builder.h"
#include "ir/interp.h"
#include "ir/printer.h"

namespace tenet::ad::testing {
namespace {

using ir::Affine;
using ir::ReduceOp;
using ir::SizeExpr;

Affine v(const char* name) {
  return Affine::var(name);
}

GradcheckOptions vjp_options(ir::SizeBindings sizes) {
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = std::move(sizes);
  return opt;
}

void expect_pass(const ir::Function& fn, const GradcheckOptions& opt) {
  GradcheckReport r = gradcheck(fn, opt);
  EXPECT_TRUE(r.pass) << format_report(r) << ir::print(differentiate(fn, opt.request));
}

// m(i) = max(a(i), max over k of x(i, k)): the init competes and wins ties.
ir::Function max_with_init(ReduceOp op) {
  ir::FunctionBuilder fb("f");
  SizeExpr N = SizeExpr::sym("N"), K = SizeExpr::sym("K");
  auto x = fb.input("x", ElemType::F32, {N, K});
  auto a = fb.input("a", ElemType::F32, {N});
  auto body = ir::make_binary(ir::BinOp::Mul, ir::make_read(x, {v("i"), v("k")}),
                              ir::make_const(2, ElemType::F32));
  fb.output(fb.compute("m", {{"i", 0, N}}, {{"k", 0, K}}, op, body, a));
  return fb.finish();
}

TEST(BuilderGrad, MaxAndMinWithInit) {
  for (ReduceOp op : {ReduceOp::Max, ReduceOp::Min}) {
    ir::Function fn = max_with_init(op);
    expect_pass(fn, vjp_options({{"N", 3}, {"K", 4}}));
    // Row 0: the init is the extreme and ties with 2 * x(0, 1); row 1: x wins.
    Tensor x(ElemType::F32, {2, 3}), a(ElemType::F32, {2}), dm(ElemType::F32, {2});
    const double sign = op == ReduceOp::Max ? 1 : -1;
    const double xs[6] = {0, 2, 1, 3, 0, 3};
    for (int k = 0; k < 6; ++k) x.set(k, sign * xs[k]);
    a.set(0, sign * 4);
    a.set(1, sign * 1);
    dm.set(0, 10);
    dm.set(1, 20);
    std::vector<Tensor> out = ir::interpret(differentiate(fn, {{}, "", true}), {x, a, dm});
    const double dx[6] = {0, 0, 0, 40, 0, 0};  // d(2 x)/dx = 2, first of the tie at k = 0
    for (int k = 0; k < 6; ++k) EXPECT_EQ(out[1].get(k), dx[k]) << k;
    EXPECT_EQ(out[2].get(0), 10);  // the init won (a tie with x counts for the init)
    EXPECT_EQ(out[2].get(1), 0);
    // Only the init needs a gradient: no argmax is computed.
    std::string only_init = ir::print(differentiate(fn, {{"a"}, "", true}));
    EXPECT_EQ(only_init.find("argm"), std::string::npos) << only_init;
  }
}

TEST(BuilderGrad, DeclaredFloat64AndCasts) {
  ir::FunctionBuilder fb("f");
  SizeExpr N = SizeExpr::sym("N");
  auto x = fb.input("x", ElemType::F64, {N});
  auto y = fb.input("y", ElemType::F32, {N});
  auto prod = ir::make_binary(
      ir::BinOp::Mul, ir::make_read(x, {v("i")}),
      ir::make_cast(ir::make_unary(ir::UnOp::Exp, ir::make_read(y, {v("i")})), ElemType::F64));
  fb.output(
      fb.compute("out", {{"i", 0, N}}, {}, ReduceOp::None, ir::make_cast(prod, ElemType::F32)));
  ir::Function fn = fb.finish();
  expect_pass(fn, vjp_options({{"N", 4}}));
  ir::Function g = differentiate(fn, {{}, "", true});
  EXPECT_EQ(g.outputs.at(1)->type, ElemType::F64);  // d_x has x's type
  EXPECT_EQ(g.outputs.at(2)->type, ElemType::F32);
}

// Outputs (x, y, y2): x is an input, y and y2 are one value; each output gets
// a cotangent. The cotangent of output x is the input d_x, so x's gradient
// output takes its value's unique name.
TEST(BuilderGrad, OutputsThatAreInputsOrRepeated) {
  ir::FunctionBuilder fb("f");
  SizeExpr N = SizeExpr::sym("N");
  auto x = fb.input("x", ElemType::F32, {N});
  auto y = fb.compute("y", {{"i", 0, N}}, {}, ReduceOp::None,
                      ir::make_unary(ir::UnOp::Tanh, ir::make_read(x, {v("i")})));
  fb.output(x);
  fb.output(y);
  fb.output(y, "y2");
  ir::Function fn = fb.finish();
  expect_pass(fn, vjp_options({{"N", 3}}));
  ir::Function g = differentiate(fn, {{}, "", true});
  ASSERT_EQ(g.inputs.size(), 4u);  // x and three cotangents
  EXPECT_EQ(g.inputs[3]->name, "d_y2");
  EXPECT_EQ(g.output_names, (std::vector<std::string>{"x", "y", "y2", "d_x.1"}));
  Tensor xs(ElemType::F32, {1}), c1(ElemType::F32, {1}), c2(ElemType::F32, {1}),
      c3(ElemType::F32, {1});
  c1.set(0, 1);
  c2.set(0, 10);
  c3.set(0, 100);
  std::vector<Tensor> out = ir::interpret(g, {xs, c1, c2, c3});
  EXPECT_EQ(out.at(3).get(0), 111);  // x = 0: d_x = 1 + (10 + 100) * tanh'(0)
  // A scalar function returning its input: the gradient is exactly 1.
  ir::FunctionBuilder id("id");
  id.output(id.input("a", ElemType::F32, {}));
  ir::Function gi = differentiate(id.finish(), {});
  EXPECT_EQ(ir::interpret(gi, {Tensor(ElemType::F32, {})}).at(1).get(0), 1);
}

// A loop carrying one tensor unchanged (next = param) and updating another.
TEST(BuilderGrad, LoopWithAnUnchangedCarriedTensor) {
  ir::FunctionBuilder fb("f");
  SizeExpr N = SizeExpr::sym("N");
  auto x = fb.input("x", ElemType::F32, {N});
  auto w = fb.input("w", ElemType::F32, {N});
  fb.begin_loop("it", 3);
  auto h = fb.carry(x, "h");
  auto k = fb.carry(w, "k");
  auto next = fb.compute(
      "h", {{"i", 0, N}}, {}, ReduceOp::None,
      ir::make_unary(ir::UnOp::Sigmoid, ir::make_binary(ir::BinOp::Mul, ir::make_read(h, {v("i")}),
                                                        ir::make_read(k, {v("i")}))));
  auto results = fb.end_loop({next, k}, {});
  fb.output(results[0]);
  fb.output(results[1]);
  ir::Function fn = fb.finish();
  expect_pass(fn, vjp_options({{"N", 3}}));
}

}  // namespace
}  // namespace tenet::ad::testing
