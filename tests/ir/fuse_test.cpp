// The fuse pass: which producers it inlines (one function per rule in
// tests/passes/fuse.ir, whose golden is beside it), that the outputs stay
// bitwise the same, and the cost of expressions.
#include "passes/fuse.h"

#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/printer.h"
#include "ir/verify.h"
#include "tests/ir/pass_testing.h"

namespace tenet::ir {
namespace {

std::string attr(const Stmt* s, const std::string& key) {
  if (!s) return "(no statement)";
  for (const std::string& line : describe_annotations(*s))
    if (line.rfind(key + ": ", 0) == 0) return line.substr(key.size() + 2);
  return "(none)";
}

class FusePass : public ::testing::Test {
 protected:
  void SetUp() override {
    before_ = testing::read_ir("fuse.ir");
    after_ = before_;
    for (Function& f : after_.functions) {
      f = f.clone();
      passes::fuse(f);
      verify(f, "fuse");
    }
  }
  /// Whether `value` is still computed by a statement of function `fn`.
  bool kept(const std::string& fn, const std::string& value) {
    return testing::find_statement(after_.find(fn)->body, value) != nullptr;
  }
  const Stmt* statement(const std::string& fn, const std::string& value) {
    return testing::find_statement(after_.find(fn)->body, value);
  }

  Module before_, after_;
};

TEST_F(FusePass, OutputsStayBitwiseTheSame) {
  for (size_t i = 0; i < before_.functions.size(); ++i) {
    SCOPED_TRACE(before_.functions[i].name);
    testing::expect_same_outputs(before_.functions[i], after_.functions[i], 9);
  }
}

TEST_F(FusePass, InlinesCheapValuesReadAFewTimes) {
  EXPECT_FALSE(kept("twice", "d"));
  EXPECT_EQ(attr(statement("twice", "sq"), "inlined"), "%d");
  EXPECT_FALSE(kept("shifted", "p"));
  EXPECT_EQ(print(statement("shifted", "q")->compute.body),
            "sub(mul(cast<float32>(add(j, 1:int64)), %x[j + 1]), mul(cast<float32>(j), %x[j]))");
}

TEST_F(FusePass, KeepsValuesWhoseRecomputationCostsTooMuch) {
  EXPECT_TRUE(kept("broadcast", "e"));  // 8 evaluations of an exp
  EXPECT_TRUE(kept("symbolic", "p"));   // a fan-in of K, unknown
  EXPECT_EQ(attr(statement("broadcast", "out"), "inlined"), "(none)");
}

TEST_F(FusePass, FoldsAccumulationChainsIntoOneAssignment) {
  EXPECT_FALSE(kept("chain", "a"));
  EXPECT_FALSE(kept("chain", "b"));
  const Stmt* c = statement("chain", "c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->compute.op, ReduceOp::None);
  EXPECT_EQ(c->compute.init, nullptr);
  EXPECT_EQ(print(c->compute.body), "add(add(mul(%x[n], 2:float32), exp(%x[n])), %y[n])");
  EXPECT_EQ(attr(c, "inlined"), "%a, %b");
}

TEST_F(FusePass, NeverInlinesWhereItWouldChangeTheProgramsShape) {
  EXPECT_TRUE(kept("guarded", "p"));
  EXPECT_TRUE(kept("output", "p"));
  EXPECT_TRUE(kept("max_reader", "prod"));  // a product read by a max
  EXPECT_FALSE(kept("max_reader", "plus"));
  EXPECT_TRUE(kept("gemm_reader", "relu"));
  EXPECT_EQ(print(statement("gemm_reader", "c")->compute.body), "mul(%relu[m, k], %b[k, n])");
  EXPECT_TRUE(kept("in_loops", "p"));         // read inside the loop
  EXPECT_FALSE(kept("in_loops", "q"));        // inlined into r, in the same body
  EXPECT_TRUE(kept("in_loops", "r"));         // carried to the next iteration
  EXPECT_TRUE(kept("reshape_between", "h"));  // read by a reshape
  EXPECT_TRUE(kept("reshape_between", "y"));  // a reshape
  EXPECT_EQ(print(statement("reshape_between", "y")->compute.body), "%h[b, 3*i1 + i2]");
}

TEST_F(FusePass, NoPolicyOutsideGradientPrograms) {
  for (const Function& f : after_.functions)
    for (const Stmt& s : f.body) {
      EXPECT_EQ(s.annotations.saved, "") << f.name;
      EXPECT_TRUE(s.annotations.recomputed.empty()) << f.name;
    }
}

TEST(FuseCost, CountsOperationUnits) {
  FunctionBuilder fb("f");
  fb.size_param("N");
  ValuePtr x = fb.input("x", ElemType::F32, {SizeExpr::sym("N")});
  Expr read = make_read(x, {Affine::var("n")});
  EXPECT_EQ(passes::expression_cost(read), 1);
  EXPECT_EQ(passes::expression_cost(make_const(2, ElemType::F32)), 0);
  EXPECT_EQ(passes::expression_cost(make_binary(BinOp::Add, read, read)), 3);
  EXPECT_EQ(passes::expression_cost(make_binary(BinOp::Div, read, read)), 6);
  EXPECT_EQ(passes::expression_cost(make_unary(UnOp::Sqrt, read)), 5);
  EXPECT_EQ(passes::expression_cost(make_unary(UnOp::Exp, make_binary(BinOp::Sub, read, read))),
            19);
}

}  // namespace
}  // namespace tenet::ir
