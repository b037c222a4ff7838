// Element-wise math: every operation of the rules table, gradchecked against
// central finite differences in float64; then select/comparisons, casts,
// constants and scalars.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/interp.h"
#include "tests/ad/ad_test_util.h"

namespace tenet::ad::testing {
namespace {

struct OpCase {
  const char* name;
  const char* expr;  // over x(i), y(i), uniform in [-1, 1)
};

// One entry per rule (and the compositions that reuse a node's value).
const OpCase kOps[] = {
    {"add", "x(i) + y(i)"},
    {"sub", "x(i) - y(i)"},
    {"mul", "x(i) * y(i)"},
    {"div", "x(i) / (y(i) + 2)"},
    {"neg", "-x(i) * y(i)"},
    {"exp", "exp(x(i)) * y(i)"},
    {"log", "log(y(i) + 2)"},
    {"sqrt", "sqrt(y(i) + 2)"},
    {"tanh", "tanh(x(i))"},
    {"sigmoid", "sigmoid(x(i) * y(i))"},
    {"abs", "abs(x(i)) * y(i)"},
    {"pow_both", "pow(y(i) + 2, x(i))"},
    {"pow_const", "pow(x(i), 3.0)"},
    {"fmax", "fmax(x(i), y(i))"},
    {"fmin", "fmin(x(i), y(i) * 2)"},
    {"select", "select(x(i) > y(i), x(i) * y(i), exp(y(i)))"},
    {"select_logic", "select(x(i) > 0 && y(i) < 0.5 || !(x(i) < -0.5), x(i), 2 * y(i))"},
    {"comparison_as_float", "float32(x(i) > y(i)) * y(i) + x(i)"},
    {"cast_f64", "float32(float64(x(i)) * float64(y(i)))"},
    {"cast_int_stops", "float32(int32(x(i) * 4)) * y(i)"},
    {"constants", "3 * x(i) + 1 - 0.5 * y(i) / 4"},
    {"shared_reads", "x(i) * exp(x(i)) / (1 + x(i) * x(i)) + sqrt(y(i) * y(i) + 1)"},
    {"nested", "tanh(sigmoid(x(i)) * log(2 + y(i)) - pow(1.5 + x(i), y(i)))"},
};

class ElementwiseGrad : public ::testing::TestWithParam<OpCase> {};

TEST_P(ElementwiseGrad, MatchesFiniteDifferences) {
  const OpCase& op = GetParam();
  std::string src =
      std::string("def f(float(N) x, float(N) y) -> (out) {\n  out(i) = ") + op.expr + "\n}\n";
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = {{"N", 7}};
  GradcheckReport r = expect_gradcheck(src, "f", opt);
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[0].input, "x");
  EXPECT_EQ(r.inputs[0].checked, 7);
  EXPECT_EQ(r.inputs[1].checked, 7);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
}

std::string op_name(const ::testing::TestParamInfo<OpCase>& op) {
  return op.param.name;
}

INSTANTIATE_TEST_SUITE_P(Ops, ElementwiseGrad, ::testing::ValuesIn(kOps), op_name);

TEST(ElementwiseGrad, ScalarInputsAndScalarOutput) {
  const char* src = R"(
def f(float a, float(N) x) -> (loss) {
  t(i) = a * x(i) + a * a
  loss +=! t(i) * t(i)
}
)";
  GradcheckOptions opt;  // a scalar output: seeded with 1, no cotangent input
  opt.sizes = {{"N", 4}};
  GradcheckReport r = expect_gradcheck(src, "f", opt);
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[0].input, "a");
  EXPECT_EQ(r.inputs[0].checked, 1);
}

TEST(ElementwiseGrad, ZeroDimensionalFunction) {
  const char* src = R"(
def f(float a, float b) -> (c) {
  c = a * b + exp(a) / (2 + b * b)
}
)";
  expect_gradcheck(src, "f", {});
}

// Integer inputs get no gradient; an input that does not reach the output
// gets an explicit zero one (it must be returned), and the values agree.
TEST(ElementwiseGrad, IntegerAndUnusedInputs) {
  const char* src = R"(
def f(float(N) x, int32(N) k, float(N) unused) -> (out) {
  out(i) = x(i) * float32(k(i))
}
)";
  ir::Function g = differentiate(compile_fn(src, "f"), {{}, "", true});
  ASSERT_EQ(g.outputs.size(), 3u);
  EXPECT_EQ(g.outputs[1]->name, "d_x");
  EXPECT_EQ(g.outputs[2]->name, "d_unused");
  Tensor x = random_tensor(ElemType::F32, {3}, 1), unused = random_tensor(ElemType::F32, {3}, 2);
  Tensor k(ElemType::I32, {3}), d_out(ElemType::F32, {3});
  for (int i = 0; i < 3; ++i) {
    k.set(i, i + 2);
    d_out.set(i, 10 * i + 1);
  }
  std::vector<Tensor> r = ir::interpret(g, {x, k, unused, d_out});
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(r[0].get(i), float(x.get(i) * (i + 2)));  // the forward output
    EXPECT_EQ(r[1].get(i), (10 * i + 1) * (i + 2));     // d_x = d_out * k
    EXPECT_EQ(r[2].get(i), 0);                          // d_unused
  }
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = {{"N", 5}};
  GradcheckReport rep = expect_gradcheck(src, "f", opt);
  ASSERT_EQ(rep.inputs.size(), 2u);  // x and unused; never k
  EXPECT_EQ(rep.inputs[1].input, "unused");
}

// A vector-Jacobian product of some outputs (GradRequest::outputs, what
// PyTorch's autograd asks for when the loss uses only some): cotangents for
// those only, in the function's order. Where an output left out has an
// infinite derivative (log at 0), the full product with a zero cotangent is
// NaN (0 * inf), the partial one is not.
TEST(VjpOfSomeOutputs, TakesCotangentsOnlyForThose) {
  const char* src = R"(
def f(float(N) x) -> (y, z, w) {
  y(i) = x(i) * x(i)
  z(i) = log(x(i))
  w(i) = 3 * x(i)
}
)";
  ir::Function fn = compile_fn(src, "f");
  GradRequest req;
  req.vjp = true;
  req.outputs = {"y"};
  ir::Function g = differentiate(fn, req);
  auto input_names = [](const ir::Function& f) {
    std::vector<std::string> names;
    for (const ir::ValuePtr& v : f.inputs) names.push_back(v->name);
    return names;
  };
  EXPECT_EQ(input_names(g), (std::vector<std::string>{"x", "d_y"}));
  EXPECT_EQ(g.output_names, (std::vector<std::string>{"y", "z", "w", "d_x"}));
  Tensor x = tensor({3}, {0, 1, 2}), d_y = tensor({3}, {1, 1, 1});
  std::vector<Tensor> r = ir::interpret(g, {x, d_y});
  EXPECT_EQ(values(r[3]), (std::vector<double>{0, 2, 4}));  // 2 x d_y

  Tensor zeros = tensor({3}, {0, 0, 0});
  std::vector<Tensor> full =
      ir::interpret(differentiate(fn, {{}, "", true}), {x, d_y, zeros, zeros});
  EXPECT_TRUE(std::isnan(full[3].get(0)));  // 0 * (1 / 0)

  req.outputs = {"w", "y"};  // the function's order, whatever the request's
  g = differentiate(fn, req);
  EXPECT_EQ(input_names(g), (std::vector<std::string>{"x", "d_y", "d_w"}));
  r = ir::interpret(g, {x, d_y, tensor({3}, {1, 0, 2})});
  EXPECT_EQ(values(r[3]), (std::vector<double>{3, 2, 10}));  // 2 x d_y + 3 d_w

  GradcheckOptions opt;
  opt.request = req;
  opt.sizes = {{"N", 4}};
  expect_gradcheck(src, "f", opt);
}

// A value that reaches the outputs only through `* 0` has a zero adjoint, and
// so has everything it reads (AD stopped with "no adjoint for t" before):
// through one statement, a chain of them, a max-reduction and an init.
TEST(ElementwiseGrad, ValuesMultipliedByZeroGetZeroGradients) {
  const char* src = R"(
def f(float(B, K) x, float(B, K) w) -> (loss) {
  t(b, k) = x(b, k) * w(b, k)
  u(b, k) = exp(t(b, k)) + 1
  m(b) max=! u(b, k)
  s(b) = m(b) * 2
  dead(b) = s(b) * 0
  loss +=! dead(b) + 0.0 * u(b, k) + w(b, k) * w(b, k)
}
)";
  GradcheckOptions opt;
  opt.sizes = {{"B", 2}, {"K", 3}};
  GradcheckReport r = expect_gradcheck(src, "f", opt);
  ASSERT_EQ(r.inputs.size(), 2u);
  ir::Function g = differentiate(compile_fn(src, "f"), {});
  Tensor x = random_tensor(ElemType::F32, {2, 3}, 1), w = random_tensor(ElemType::F32, {2, 3}, 2);
  std::vector<Tensor> out = ir::interpret(g, {x, w});
  ASSERT_EQ(out.size(), 3u);
  for (int64_t e = 0; e < 6; ++e) {
    EXPECT_EQ(out[1].get(e), 0) << "d_x[" << e << "]";
    EXPECT_FLOAT_EQ(out[2].get(e), 2 * w.get(e)) << "d_w[" << e << "]";
  }
  // The minimal case of the issue, and a loss that does not depend on x at all.
  GradcheckOptions three;
  three.sizes = {{"N", 3}};
  expect_gradcheck("def f(float(N) x) -> (loss) {\n  y(i) = x(i) * 0\n  loss +=! y(i)\n}\n", "f",
                   three);
  expect_gradcheck(
      "def f(float(N) x) -> (loss) {\n  y(i) = x(i) * 2\n  z(i) = y(i) * 0\n  loss +=! "
      "z(i) * z(i)\n}\n",
      "f", three);
}

// fmax/fmin at a tie send the whole adjoint to their first operand.
TEST(ElementwiseGrad, FmaxFminTiesGoToTheFirstOperand) {
  const char* src = R"(
def f(float(N) x, float(N) y) -> (out) {
  out(i) = fmax(x(i), y(i)) + 10 * fmin(x(i), y(i))
}
)";
  ir::Function g = differentiate(compile_fn(src, "f"), {{}, "", true});
  Tensor x(ElemType::F32, {1}), y(ElemType::F32, {1}), d(ElemType::F32, {1});
  x.set(0, 0.5);
  y.set(0, 0.5);
  d.set(0, 1);
  std::vector<Tensor> r = ir::interpret(g, {x, y, d});
  EXPECT_EQ(r[1].get(0), 11);  // d_x
  EXPECT_EQ(r[2].get(0), 0);   // d_y
}

// The gradient function's forward outputs are the original function's.
TEST(ElementwiseGrad, ForwardOutputsUnchanged) {
  const char* src = R"(
def f(float(N) x) -> (y, z) {
  y(i) = exp(x(i))
  z(i) = y(i) * x(i)
}
)";
  ir::Function fn = compile_fn(src, "f");
  ir::Function g = differentiate(fn, {{}, "", true});
  Tensor x = random_tensor(ElemType::F32, {4}, 3);
  std::vector<Tensor> a = ir::interpret(fn, {x});
  std::vector<Tensor> b = ir::interpret(g, {x, x, x});
  ASSERT_EQ(b.size(), 3u);
  for (int o = 0; o < 2; ++o) EXPECT_EQ(compare(a[size_t(o)], b[size_t(o)]).max_abs, 0);
}

}  // namespace
}  // namespace tenet::ad::testing
