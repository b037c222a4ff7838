// The IR text form: printer goldens and print(parse(print(m))) == print(m).
#include <gtest/gtest.h>

#include "ir/ir_parser.h"
#include "ir/printer.h"
#include "tests/ir/ir_samples.h"
#include "tests/support/golden.h"

namespace tenet::ir {
namespace {

Module parse_text(const std::string& text, const std::string& path = "test.ir") {
  return parse_ir(SourceFile(path, text));
}

TEST(IrPrinter, Goldens) {
  testing::expect_golden("ir/squash.ir", print(samples::squash()));
  testing::expect_golden("ir/softmax.ir", print(samples::softmax()));
  testing::expect_golden("ir/conv_stride2.ir", print(samples::conv_stride2()));
  testing::expect_golden("ir/stencil.ir", print(samples::stencil()));
  testing::expect_golden("ir/mixed_types.ir", print(samples::mixed_types()));
  testing::expect_golden("ir/routing.ir", print(samples::routing()));
  testing::expect_golden("ir/annotated.ir", print(samples::annotated()));
}

TEST(IrPrinter, Expressions) {
  Expr x = make_read(samples::squash().inputs[0],
                     {Affine::var("b"), Affine{{{"n", 2}}, SizeExpr(-1)},
                      Affine{{{"d", -1}}, SizeExpr::sym("D") - 1}},
                     true);
  EXPECT_EQ(print(x), "%s?[b, 2*n - 1, -d + (D - 1)]");
  EXPECT_EQ(print(make_const(1e-7, ElemType::F32)), "1e-07:float32");
  EXPECT_EQ(print(make_const(0.1, ElemType::F64)), "0.1:float64");
  EXPECT_EQ(print(make_const(-0.0, ElemType::F32)), "-0:float32");
  EXPECT_EQ(print(make_const(-3, ElemType::I32)), "-3:int32");
  EXPECT_EQ(print(make_const(1, ElemType::Bool)), "true:bool");
  EXPECT_EQ(print(make_cast(make_index("i"), ElemType::F32)), "cast<float32>(i)");
  EXPECT_EQ(print(make_size(SizeExpr::floordiv(SizeExpr::sym("H") - 9, 2) + 1)),
            "size((H - 9) / 2 + 1)");
}

// Every sample, printed, parsed and printed again, gives the same text; the
// parsed module has the same value names and verifies.
TEST(IrParser, RoundTripsEverySample) {
  Module m = samples::all();
  std::string text = print(m);
  Module parsed = parse_text(text);
  ASSERT_EQ(parsed.functions.size(), m.functions.size());
  EXPECT_EQ(print(parsed), text);
  for (size_t i = 0; i < m.functions.size(); ++i) {
    SCOPED_TRACE(m.functions[i].name);
    const Function& a = m.functions[i];
    const Function& b = parsed.functions[i];
    EXPECT_EQ(b.size_params, a.size_params);
    ASSERT_EQ(b.inputs.size(), a.inputs.size());
    for (size_t k = 0; k < a.inputs.size(); ++k) EXPECT_EQ(b.inputs[k]->name, a.inputs[k]->name);
    ASSERT_EQ(b.outputs.size(), a.outputs.size());
    for (size_t k = 0; k < a.outputs.size(); ++k) EXPECT_EQ(b.outputs[k]->name, a.outputs[k]->name);
  }
}

TEST(IrParser, KeepsExactDoubles) {
  for (double v : {0.1, 1.0 / 3.0, 1e-300, 5e-324, 1.7976931348623157e308, -2.5, 123456789.0}) {
    Module m = parse_text("func f[N](%x: float64[N]) {\n  %y[i]: float64[N] = mul(%x[i], " +
                          print(make_const(v, ElemType::F64)) + ")\n  return %y\n}\n");
    const Expr& body = m.functions[0].body[0].compute.body;
    EXPECT_EQ(body->args[1]->value, v);
  }
}

TEST(IrParser, ParsesHandWrittenText) {
  // Comments, '//' lines (as in --dump-after output), free spacing.
  Module m = parse_text(R"(// ----- IR after check -----
func scale[N](%x: float32[N]) {
  # y(i) = x(i) * 2
  %y[i]: float32[N]=mul( %x[i],2:float32 )
  // an ordinary comment, not source text
  return %y
}
)");
  ASSERT_EQ(m.functions.size(), 1u);
  const Function& f = m.functions[0];
  ASSERT_EQ(f.body.size(), 1u);
  EXPECT_EQ(f.body[0].source, "y(i) = x(i) * 2");
  EXPECT_EQ(print(m), R"(func scale[N](%x: float32[N]) {
  # y(i) = x(i) * 2
  %y[i]: float32[N] = mul(%x[i], 2:float32)
  return %y
}
)");
}

TEST(IrParser, ComputedIndicesRoundTrip) {
  // Indices in braces are computed (data-dependent or not affine); each keeps
  // its form through print and parse.
  const std::string text = R"(func f[V, D, B, L](%W: float32[V, D], %I: int32[B, L]) {
  %O[b, d]: float32[B, D] = sum [l in 0:L] %W[{cast<int64>(%I[b, l])}, d]
  %P[i]: float32[V] = %W[i, {rem(i, 4:int64)}]
  return %O, %P
}
)";
  Module m = parse_text(text);
  EXPECT_EQ(print(m), text);
  const Expr& read = m.functions[0].body[0].compute.body;
  ASSERT_TRUE(read->has_computed_index());
  EXPECT_TRUE(read->is_computed(0));
  EXPECT_FALSE(read->is_computed(1));
  EXPECT_EQ(read_text(*read), "W(I(b, l), d)");
}

TEST(IrParser, NamesFollowTheTextNotTheBuilder) {
  // A loop result whose name the builder would not have chosen (as after DCE).
  std::string text = R"(func f[N](%x: float32[N]) {
  loop it in 0:2 carry(%q = %x) {
    %w[i]: float32[N] = add(%q[i], %x[i])
  } -> (%zz.7 = next %w)
  return %zz.7
}
)";
  EXPECT_EQ(print(parse_text(text)), text);
}

TEST(IrParser, EmptyModuleAndEmptyFunction) {
  EXPECT_TRUE(parse_text("").functions.empty());
  EXPECT_TRUE(parse_text("# nothing here\n// or here\n").functions.empty());
  std::string text = "func nothing() {\n  return\n}\n";
  EXPECT_EQ(print(parse_text(text)), text);
}

TEST(IrParser, SizeExpressionsReadBackInNormalForm) {
  using E = SizeExpr;
  E B = E::sym("B"), N = E::sym("N"), M = E::sym("M"), H = E::sym("H");
  for (const E& size :
       {B * N * E(2), B * N * M, E::floordiv(H - 9, 2) + 1, E::floordiv(H, 2) * E(3),
        E::min(N, M) + E::max(B, H * E(2)), E(0) - B * N, (B + E(1)) * N, E::floordiv(B * N, 4),
        E::floordiv(B * E(2) + E(1), 3), (B * E(2)) * N}) {
    SCOPED_TRACE(size.str());
    std::string text = "func f[B, N, M, H](%x: float32[" + size.str() + "]) {\n  return %x\n}\n";
    Module m = parse_text(text);
    EXPECT_EQ(m.functions[0].inputs[0]->shape[0], size);
    EXPECT_EQ(print(m), text);
  }
}

}  // namespace
}  // namespace tenet::ir
