// The simplify pass (before/after golden: tests/passes/simplify.ir): exactness
// on special values, and no change to any output of the sample functions.
#include "passes/simplify.h"

#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/printer.h"
#include "ir/verify.h"
#include "tests/ir/ir_samples.h"
#include "tests/ir/pass_testing.h"

namespace tenet::ir {
namespace {

TEST(SimplifyPass, LeavesInexactFoldsAlone) {
  auto f32 = [](double v) { return make_const(v, ElemType::F32); };
  auto add = [](Expr a, Expr b) { return make_binary(BinOp::Add, a, b); };
  EXPECT_EQ(print(passes::simplify_expr(add(f32(1), f32(2)))), "3:float32");
  // 0.1 + 0.2 rounds differently in float32 and float64.
  EXPECT_EQ(print(passes::simplify_expr(add(f32(0.1), f32(0.2)))), "add(0.1:float32, 0.2:float32)");
  // 2^24 + 1 is exact in float64 only.
  EXPECT_EQ(print(passes::simplify_expr(add(f32(16777216), f32(1)))),
            "add(16777216:float32, 1:float32)");
  // max and min are maximumNumber and minimumNumber: the tie of -0 and +0
  // has one answer in either order, which folds.
  EXPECT_EQ(print(passes::simplify_expr(make_binary(BinOp::Max, f32(-0.0), f32(0.0)))),
            "0:float32");
  EXPECT_EQ(print(passes::simplify_expr(make_binary(BinOp::Max, f32(0.0), f32(-0.0)))),
            "0:float32");
  EXPECT_EQ(print(passes::simplify_expr(make_binary(BinOp::Min, f32(0.0), f32(-0.0)))),
            "-0:float32");
  EXPECT_EQ(print(passes::simplify_expr(make_binary(BinOp::Pow, f32(2), f32(2)))),
            "pow(2:float32, 2:float32)");
  auto i32 = [](double v) { return make_const(v, ElemType::I32); };
  // int32 arithmetic wraps, as in the interpreter and generated code.
  EXPECT_EQ(print(passes::simplify_expr(make_binary(BinOp::Add, i32(2147483647), i32(1)))),
            "-2147483648:int32");
  EXPECT_EQ(print(passes::simplify_expr(make_binary(BinOp::Div, i32(-7), i32(2)))), "-3:int32");
  // Division by zero is a run-time error; it must stay one.
  EXPECT_EQ(print(passes::simplify_expr(make_binary(BinOp::Div, i32(1), i32(0)))),
            "div(1:int32, 0:int32)");
  // x * 0 drops x only when x cannot fail (an unguarded read might be out of bounds).
  ValuePtr k = samples::mixed_types().inputs[1];
  Expr k0 = make_read(k, {Affine::var("n")});
  Expr zero = make_const(0, ElemType::I64);
  EXPECT_EQ(print(passes::simplify_expr(make_binary(BinOp::Mul, k0, zero))),
            "mul(%label[n], 0:int64)");
  EXPECT_EQ(print(passes::simplify_expr(
                make_binary(BinOp::Mul, make_read(k, {Affine::var("n")}, true), zero))),
            "0:int64");
  EXPECT_EQ(print(passes::simplify_expr(make_cast(f32(-2.75), ElemType::I32))), "-2:int32");
  EXPECT_EQ(print(passes::simplify_expr(make_cast(f32(1e10), ElemType::I32))), "1410065408:int32");
}

TEST(SimplifyPass, KeepsEverySampleUnchanged) {
  Module m = samples::all();
  for (const Function& f : m.functions) {
    Function after = f.clone();
    passes::simplify(after);
    verify(after, "simplify");
    testing::expect_same_outputs(f, after);
  }
}

}  // namespace
}  // namespace tenet::ir
