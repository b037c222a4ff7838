// AD marks each gradient output with the input it is the gradient of
// (ir::Function::gradient_of): callers find gradients there, not by a `d_`
// prefix, which is wrong when `d_<input>` is already a name.
#include <gtest/gtest.h>

#include <map>

#include "ad/retype.h"
#include "ir/interp.h"
#include "ir/ir_parser.h"
#include "ir/printer.h"
#include "tests/ad/ad_test_util.h"

namespace tenet::ad::testing {
namespace {

// Each output's gradient_of, by output name.
std::map<std::string, int> marks(const ir::Function& g) {
  std::map<std::string, int> out;
  for (size_t i = 0; i < g.outputs.size(); ++i) out[g.output_names[i]] = g.gradient_of(i);
  return out;
}

TEST(GradientMarks, EachGradientNamesItsInput) {
  const char* src = R"(
def f(float(N) x, int32(N) k, float(N) w) -> (out) {
  out +=! x(i) * w(i) * float32(k(i))
}
)";
  ir::Function g = differentiate(compile_fn(src, "f"), {});
  EXPECT_EQ(marks(g), (std::map<std::string, int>{{"out", -1}, {"d_x", 0}, {"d_w", 2}}));
  EXPECT_EQ(g.gradient_output(0), 1);
  EXPECT_EQ(g.gradient_output(1), -1);  // an integer input has none
  EXPECT_EQ(g.gradient_output(2), 2);
  // The checker's function has none.
  EXPECT_EQ(compile_fn(src, "f").gradient_inputs, std::vector<int>{});
}

// A parameter named d_w beside w: w's gradient cannot be named d_w, so the
// name says nothing; the mark still does (a trainer reading the prefix
// would give d_w's gradient... to nobody, and w's to nothing).
TEST(GradientMarks, HoldWhenTheUsualNameIsTaken) {
  const char* src = R"(
def f(float(N) w, float(N) d_w) -> (loss) {
  loss +=! w(i) * w(i) + 3 * d_w(i)
}
)";
  ir::Function g = differentiate(compile_fn(src, "f"), {});
  ASSERT_EQ(g.outputs.size(), 3u);
  EXPECT_NE(g.output_names[1], "d_w");  // taken by the input
  EXPECT_EQ(g.gradient_of(1), 0);
  EXPECT_EQ(g.output_names[2], "d_d_w");
  EXPECT_EQ(g.gradient_of(2), 1);
  std::vector<Tensor> r = ir::interpret(g, {tensor({2}, {1, 2}), tensor({2}, {5, 5})});
  EXPECT_EQ(values(r[size_t(g.gradient_output(0))]), (std::vector<double>{2, 4}));  // 2 w
  EXPECT_EQ(values(r[size_t(g.gradient_output(1))]), (std::vector<double>{3, 3}));
}

// With vjp, the gradient of an output's initial value (an input the output
// updates) is the output named like the cotangent it updates: still marked.
TEST(GradientMarks, TheGradientOfAnUpdatedInput) {
  const char* src = "def f(float(N) x) -> (float(N) y) {\n  y(i) += 2 * x(i)\n}\n";
  ir::Function fn = compile_fn(src, "f");
  ASSERT_EQ(fn.inputs.at(1)->name, "y");
  ir::Function g = differentiate(fn, {{}, "", true});
  EXPECT_EQ(marks(g), (std::map<std::string, int>{{"y", -1}, {"d_x", 0}, {"d_y", 1}}));
}

// The marks survive retyping and the printed IR; differentiating again marks
// the new gradients only.
TEST(GradientMarks, SurviveRetypeDifferentiationAndText) {
  const char* src = R"(
def f(float(N) x, float(N) w) -> (loss) {
  loss +=! x(i) * w(i) * w(i)
}
)";
  ir::Function g = differentiate(compile_fn(src, "f"), {});
  EXPECT_EQ(with_float_type(g, ElemType::F64).gradient_inputs, g.gradient_inputs);
  GradRequest again;
  again.output = "loss";
  again.wrt = {"w"};
  ir::Function gg = differentiate(g, again);
  // Marked: the gradients of this derivative, not the earlier one's.
  EXPECT_EQ(marks(gg),
            (std::map<std::string, int>{{"loss", -1}, {"d_x", -1}, {"d_w", -1}, {"d_w.1", 1}}))
      << ir::print(gg);

  const std::string text = ir::print(g);
  EXPECT_NE(text.find("%d_x gradient of %x, %d_w gradient of %w"), std::string::npos) << text;
  ir::Module parsed = ir::parse_ir(SourceFile("g.ir", text));
  EXPECT_EQ(parsed.functions.at(0).gradient_inputs, g.gradient_inputs);
  EXPECT_EQ(ir::print(parsed), text);
}

}  // namespace
}  // namespace tenet::ad::testing
