// Lowering of small programs to IR: goldens of the printed IR of the samples
// in tests/lang/data/check/, and direct checks of the fields that later
// passes rely on (reduce ops, ranges, types, value names, sources, spans).
#include <gtest/gtest.h>

#include <string>

#include "ir/printer.h"
#include "lang/check.h"
#include "tests/lang/check_util.h"
#include "tests/support/golden.h"

namespace tenet::lang {
namespace {

using tenet::testing::check_ok;
using tenet::testing::check_print;

SourceFile sample(const std::string& name) {
  std::string relative = "tests/lang/data/check/" + name + ".tn";
  return SourceFile(relative, tenet::testing::read_file(tenet::testing::source_path(relative)));
}

TEST(CheckLower, LoweringSampleGolden) {
  ir::Module m = compile_source(sample("lowering"));
  tenet::testing::expect_golden("lang/check/lowering.ir", ir::print(m));
}

TEST(CheckLower, LoopsAndCallsSampleGolden) {
  ir::Module m = compile_source(sample("loops_calls"));
  tenet::testing::expect_golden("lang/check/loops_calls.ir", ir::print(m));
}

const ir::Compute& compute(const ir::Function& f, size_t i) {
  EXPECT_LT(i, f.body.size());
  EXPECT_EQ(f.body.at(i).kind, ir::StmtKind::Compute);
  return f.body.at(i).compute;
}

TEST(CheckLower, ReductionOpsRangesAndNames) {
  ir::Module m = check_ok(R"(def f(float(N, K) z) -> (a, b, c, d) {
  a(n) +=! z(n, k)
  b(n) max=! z(n, k)
  c(n) min=! z(n, k)
  d(n, k) = z(n, k) * 2
})");
  ASSERT_EQ(m.functions.size(), 1u);
  const ir::Function& f = m.functions[0];
  EXPECT_EQ(f.name, "f");
  EXPECT_EQ(f.size_params, (std::vector<std::string>{"N", "K"}));
  ASSERT_EQ(f.body.size(), 4u);
  ir::ReduceOp ops[] = {ir::ReduceOp::Sum, ir::ReduceOp::Max, ir::ReduceOp::Min,
                        ir::ReduceOp::None};
  const char* names[] = {"a", "b", "c", "d"};
  for (size_t i = 0; i < 4; ++i) {
    const ir::Compute& c = compute(f, i);
    EXPECT_EQ(c.op, ops[i]);
    EXPECT_EQ(c.result->name, names[i]);
    EXPECT_EQ(c.result->type, ElemType::F32);
    ASSERT_GE(c.out.size(), 1u);
    EXPECT_EQ(c.out[0].index, "n");
    EXPECT_EQ(c.out[0].lo, ir::SizeExpr(0));
    EXPECT_EQ(c.out[0].hi, ir::SizeExpr::sym("N"));
  }
  for (size_t i = 0; i < 3; ++i) {
    const ir::Compute& c = compute(f, i);
    ASSERT_EQ(c.reduce.size(), 1u);
    EXPECT_EQ(c.reduce[0].index, "k");
    EXPECT_EQ(c.reduce[0].hi, ir::SizeExpr::sym("K"));
  }
  EXPECT_TRUE(compute(f, 3).reduce.empty());
  EXPECT_EQ(compute(f, 3).result->shape,
            (std::vector<ir::SizeExpr>{ir::SizeExpr::sym("N"), ir::SizeExpr::sym("K")}));
  ASSERT_EQ(f.outputs.size(), 4u);
  EXPECT_EQ(f.outputs[3]->name, "d");
}

TEST(CheckLower, SourceTextAndSpans) {
  std::string text = "def f(float(N) x) -> (y) {\n  y(i) = x(i) * 2  # doubled\n}\n";
  ir::Module m = check_ok(text);
  ASSERT_EQ(m.functions.size(), 1u);
  const ir::Function& f = m.functions[0];
  ASSERT_EQ(f.body.size(), 1u);
  EXPECT_EQ(f.body[0].source, "y(i) = x(i) * 2");
  EXPECT_EQ(text.substr(f.body[0].span.begin, f.body[0].span.end - f.body[0].span.begin),
            "y(i) = x(i) * 2");
  EXPECT_EQ(f.body[0].compute.result->span.begin, f.body[0].span.begin);
  ASSERT_EQ(f.inputs.size(), 1u);
  const Span in = f.inputs[0]->span;
  EXPECT_EQ(text.substr(in.begin, in.end - in.begin), "float(N) x");
}

TEST(CheckLower, LiteralsTakeTheOtherOperandsType) {
  ir::Module m = check_ok(R"(def f(float64(N) x, int32(N) k) -> (a, b, c, d) {
  a(i) = x(i) * 2 + 1
  b(i) = k(i) * 3
  c(i) = 2 * 3 where i in 0:N
  d(i) = float64(k(i)) / 2
})");
  ASSERT_EQ(m.functions.size(), 1u);
  const ir::Function& f = m.functions[0];
  EXPECT_EQ(compute(f, 0).result->type, ElemType::F64);
  EXPECT_EQ(compute(f, 1).result->type, ElemType::I32);
  EXPECT_EQ(compute(f, 2).result->type, ElemType::F32);  // literals only: float32
  EXPECT_EQ(compute(f, 3).result->type, ElemType::F64);
  EXPECT_EQ(ir::print(compute(f, 0).body), "add(mul(%x[i], 2:float64), 1:float64)");
  EXPECT_EQ(ir::print(compute(f, 1).body), "mul(%k[i], 3:int32)");
}

TEST(CheckLower, IntegerWidthsPromoteToTheWider) {
  std::string printed = check_print(R"(def f(int32(B) label) -> (t) {
  t(b, k) = select(label(b) == k, 1, 0) where k in 0:10
})",
                                    "f");
  EXPECT_NE(printed.find("select(eq(cast<int64>(%label[b]), k), 1:float32, 0:float32)"),
            std::string::npos)
      << printed;
}

TEST(CheckLower, SizeParametersAreInt64Values) {
  std::string printed = check_print(R"(def mean(float(B, N) x) -> (m) {
  m(b) +=! x(b, n) / float32(N)
})",
                                    "mean");
  EXPECT_NE(printed.find("div(%x[b, n], cast<float32>(size(N)))"), std::string::npos) << printed;
}

TEST(CheckLower, WhereOnlySizesBecomeSizeParameters) {
  ir::Module m = check_ok(R"(def f(float(N) x) -> (y) {
  y(i, j) = x(i) where j in 0:M
})");
  ASSERT_EQ(m.functions.size(), 1u);
  EXPECT_EQ(m.functions[0].size_params, (std::vector<std::string>{"N", "M"}));
  EXPECT_EQ(m.functions[0].outputs[0]->shape[1], ir::SizeExpr::sym("M"));
}

TEST(CheckLower, AccumulateUsesThePreviousVersionAsInit) {
  ir::Module m = check_ok(R"(def f(float(N, M) x) -> (s) {
  s(i) = 0 where i in 0:N
  s(i) += x(i, j)
})");
  ASSERT_EQ(m.functions.size(), 1u);
  const ir::Function& f = m.functions[0];
  ASSERT_EQ(f.body.size(), 2u);
  const ir::Compute& acc = compute(f, 1);
  EXPECT_EQ(acc.op, ir::ReduceOp::Sum);
  EXPECT_EQ(acc.init, compute(f, 0).result);
  EXPECT_EQ(acc.result->name, "s.1");
  ASSERT_EQ(acc.reduce.size(), 1u);
  EXPECT_EQ(acc.reduce[0].index, "j");
  EXPECT_EQ(f.outputs[0], acc.result);
}

TEST(CheckLower, OutputsMayBeInputs) {
  ir::Module m = check_ok(R"(def f(float(N) x) -> (x, y) {
  y(i) = x(i)
})");
  ASSERT_EQ(m.functions.size(), 1u);
  EXPECT_EQ(m.functions[0].outputs[0], m.functions[0].inputs[0]);
}

TEST(CheckLower, DeclaredOutputsFixTheirIndices) {
  // 'k' takes the declared size K (no read constrains it), 'n' must agree with z.
  ir::Module m = check_ok(R"(def f(float(N) z) -> (float(N, K) y) {
  y(n, k) = z(n) + float32(k)
})");
  ASSERT_EQ(m.functions.size(), 1u);
  EXPECT_EQ(m.functions[0].outputs[0]->shape,
            (std::vector<ir::SizeExpr>{ir::SizeExpr::sym("N"), ir::SizeExpr::sym("K")}));
}

}  // namespace
}  // namespace tenet::lang
