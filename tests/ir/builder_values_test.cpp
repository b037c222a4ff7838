// Values made outside a FunctionBuilder and copies of values (ir/builder.h).
#include <gtest/gtest.h>

#include "ir/builder.h"

namespace tenet::ir {
namespace {

TEST(BuilderValues, MakeValueAndCopies) {
  const SizeExpr N = SizeExpr::sym("N");
  const ValuePtr v = make_value(7, "w", ElemType::F64, {N, 3}, Span{});
  EXPECT_EQ(v->id, 7);
  EXPECT_EQ(v->name, "w");
  EXPECT_EQ(v->type, ElemType::F64);
  EXPECT_EQ(v->shape, (std::vector<SizeExpr>{N, 3}));
  EXPECT_TRUE(v->layout.empty());

  const ValuePtr view = with_shape(v, {SizeExpr::sym("len"), 3});
  EXPECT_EQ(view->id, 7);
  EXPECT_EQ(view->name, "w");
  EXPECT_EQ(view->shape[0], SizeExpr::sym("len"));
  EXPECT_EQ(v->shape[0], N);  // the original is unchanged

  const ValuePtr transposed = with_layout(v, {1, 0});
  EXPECT_EQ(transposed->layout, (std::vector<int>{1, 0}));
  EXPECT_EQ(transposed->shape, v->shape);
  EXPECT_TRUE(v->layout.empty());

  const ValuePtr copy = renamed(transposed, -2, "w_copy");
  EXPECT_EQ(copy->id, -2);
  EXPECT_EQ(copy->name, "w_copy");
  EXPECT_EQ(copy->layout, transposed->layout);
  EXPECT_EQ(copy->type, ElemType::F64);
}

}  // namespace
}  // namespace tenet::ir
