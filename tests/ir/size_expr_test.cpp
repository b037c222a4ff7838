#include "ir/size_expr.h"

#include <gtest/gtest.h>

#include "support/error.h"

using tenet::ir::SizeExpr;

TEST(SizeExpr, NormalisesLinearForms) {
  SizeExpr H = SizeExpr::sym("H"), N = SizeExpr::sym("N");
  EXPECT_EQ(H - 9 + 1, H - 8);
  EXPECT_EQ((H - 8).str(), "H - 8");
  EXPECT_EQ((N * 2 + H).str(), "H + 2*N");
  EXPECT_EQ((N - N).str(), "0");
  EXPECT_EQ(SizeExpr::floordiv(H - 9, 2).str(), "(H - 9) / 2");
  EXPECT_EQ((SizeExpr::floordiv(H - 9, 2) + 1).str(), "(H - 9) / 2 + 1");
  EXPECT_EQ(SizeExpr::floordiv(N * 4 + 6, 2), N * 2 + 3);
  EXPECT_EQ(SizeExpr::min(N, N + 1), N);
}

TEST(SizeExpr, Evaluates) {
  SizeExpr H = SizeExpr::sym("H");
  auto e = SizeExpr::floordiv(H - 9, 2) + 1;
  EXPECT_EQ(e.eval({{"H", 20}}), 6);
  EXPECT_EQ(e.eval({{"H", 28}}), 10);
  EXPECT_EQ(SizeExpr::floordiv(SizeExpr(-3), 2).eval({}), -2);
  EXPECT_THROW(H.eval({}), tenet::BindError);
}

TEST(SizeExpr, Differences) {
  SizeExpr N = SizeExpr::sym("N"), M = SizeExpr::sym("M");
  EXPECT_EQ(tenet::ir::const_difference(N + 1, N), 1);
  EXPECT_FALSE(tenet::ir::const_difference(N, M).has_value());
  EXPECT_TRUE(tenet::ir::provably_le(N - 1, N));
  EXPECT_FALSE(tenet::ir::provably_le(N, M));
}

// A product with a floor division prints the division in parentheses: M*(N / 2)
// and (M*N) / 2 are different sizes and must neither print nor compare alike.
TEST(SizeExpr, ProductsOfFloorDivisionsStayDistinct) {
  SizeExpr N = SizeExpr::sym("N"), M = SizeExpr::sym("M");
  SizeExpr half_times = SizeExpr::floordiv(N, 2) * M;
  SizeExpr product_half = SizeExpr::floordiv(N * M, 2);
  EXPECT_EQ(half_times.eval({{"N", 3}, {"M", 3}}), 3);
  EXPECT_EQ(product_half.eval({{"N", 3}, {"M", 3}}), 4);
  EXPECT_NE(half_times, product_half);
  EXPECT_EQ(half_times.str(), "M*(N / 2)");
  EXPECT_EQ(product_half.str(), "M*N / 2");
}
