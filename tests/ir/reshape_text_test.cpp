// Reshape statements in the IR text (ir/reshape.h): printed with
// attrs(reshape = true), parsed back to the same text, and verified.
#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/interp.h"
#include "ir/ir_parser.h"
#include "ir/printer.h"
#include "ir/reshape.h"
#include "support/error.h"

namespace tenet::ir {
namespace {

const char* kFlatten = R"(func f[B, C, H](%x: float32[B, C, H]) {
  attrs(reshape = true)
  %y[b, i1]: float32[B, C*H] = %x[b, {div(i1, size(H))}, {rem(i1, size(H))}]
  attrs(reshape = true)
  %z[i0, i1]: float32[B*C, H] = %y[{div(i0, size(C))}, {add(mul(rem(i0, size(C)), size(H)), i1)}]
  return %y, %z
}
)";

TEST(ReshapeText, RoundTripsAndRuns) {
  Module m = parse_ir(SourceFile("reshape.ir", kFlatten));
  ASSERT_EQ(m.functions.size(), 1u);
  ASSERT_TRUE(m.functions[0].body[0].annotations.reshape);
  const std::string printed = print(m);
  EXPECT_EQ(print(parse_ir(SourceFile("again.ir", printed))), printed);
  Tensor x(ElemType::F32, {2, 3, 2});
  for (int64_t e = 0; e < 12; ++e) x.set(e, double(e));
  std::vector<Tensor> out = interpret(m.functions[0], {x});
  ASSERT_EQ(out.size(), 2u);
  for (int64_t e = 0; e < 12; ++e) {
    EXPECT_EQ(out[0].get(e), double(e));
    EXPECT_EQ(out[1].get(e), double(e));
  }
}

// What reshape_read builds: plain indices where dimensions match, '/' and
// '%' where a run of them is split or merged.
TEST(ReshapeText, ReadKeepsMatchingDimensionsPlain) {
  ValuePtr x = make_value(0, "x", ElemType::F32, {SizeExpr::sym("B"), 6, SizeExpr::sym("T")});
  std::vector<Dim> out = {
      {"b", 0, SizeExpr::sym("B")}, {"i", 0, 2}, {"j", 0, 3}, {"t", 0, SizeExpr::sym("T")}};
  EXPECT_EQ(print(reshape_read(x, out)), "%x[b, 3*i + j, t]");
  std::vector<Dim> back = {{"b", 0, SizeExpr::sym("B")}, {"k", 0, SizeExpr::sym("T") * 6}};
  EXPECT_EQ(print(reshape_read(x, back)), "%x[b, {div(k, size(T))}, {rem(k, size(T))}]");
  EXPECT_TRUE(same_element_count({SizeExpr::sym("B") * (SizeExpr::sym("T") + 1)},
                                 {SizeExpr::sym("B") * SizeExpr::sym("T") + SizeExpr::sym("B")}));
  EXPECT_EQ(element_count_text({SizeExpr::sym("B"), SizeExpr::sym("T") + 1, 2}), "B*T*2 + B*2");
}

TEST(ReshapeText, VerifierRejectsAReshapeThatIsNot) {
  auto verifier_error = [](const std::string& body) {
    try {
      parse_ir(SourceFile("bad.ir", "func f[N](%x: float32[N]) {\n" + body + "  return %y\n}\n"));
    } catch (const InternalError& e) {
      return std::string(e.what());
    } catch (const CompileError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(verifier_error("  attrs(reshape = true)\n  %y[i]: float32[N] = mul(%x[i], 2:float32)\n")
                .find("the body is not one unguarded read in the reshape defining y"),
            std::string::npos);
  EXPECT_NE(verifier_error("  attrs(reshape = true)\n  %y[i]: float32[N] = sum [k in 0:N] %x[k]\n")
                .find("not an assignment or an accumulation onto an init"),
            std::string::npos);
  const std::string count =
      verifier_error("  attrs(reshape = true)\n  %y[i]: float32[2*N] = %x[{div(i, 2:int64)}]\n");
  EXPECT_NE(count.find("the element count of x (N) changes in the reshape defining y (N*2)"),
            std::string::npos)
      << count;
  EXPECT_NE(
      verifier_error("  attrs(reshape = maybe)\n  %y[i]: float32[N] = %x[i]\n").find("'true'"),
      std::string::npos);
}

}  // namespace
}  // namespace tenet::ir
