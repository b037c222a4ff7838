// The affine index algebra (ir/affine.h), including the cases of the two
// linear-form rules it replaced (passes/index_facts.cpp, codegen/loop_bounds.cpp).
#include "ir/affine.h"

#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/printer.h"
#include "passes/index_facts.h"
#include "support/error.h"

namespace tenet::ir {
namespace {

const SizeExpr N = SizeExpr::sym("N"), M = SizeExpr::sym("M");

Affine aff(std::vector<std::pair<std::string, int64_t>> terms, SizeExpr offset = 0) {
  return Affine{std::move(terms), offset};
}

Expr i64(double v) {
  return make_const(v, ElemType::I64);
}
Expr idx(const std::string& name) {
  return make_index(name);
}
Expr bin(BinOp op, Expr a, Expr b) {
  return make_binary(op, std::move(a), std::move(b));
}

std::string form(const Expr& e) {
  auto a = linear_form(e);
  return a ? a->str() : "not affine";
}

TEST(Affine, ArithmeticKeepsFirstAppearanceOrderAndDropsZeros) {
  const Affine a = aff({{"y", 2}, {"ky", 1}}, 1), b = aff({{"x", 1}, {"ky", -1}}, N);
  EXPECT_EQ((a + b).str(), "2*y + x + (N + 1)");
  EXPECT_EQ((a - a).str(), "0");
  EXPECT_EQ((a * 3).str(), "6*y + 3*ky + 3");
  EXPECT_EQ((a * 0).str(), "0");
  EXPECT_EQ((-b).str(), "-x + ky + (-N)");
}

TEST(Affine, EqualityIgnoresOrderIdentityDoesNot) {
  const Affine a = aff({{"i", 1}, {"j", 2}}, N), b = aff({{"j", 2}, {"i", 1}}, N);
  EXPECT_TRUE(equal(a, b));
  EXPECT_FALSE(identical(a, b));
  EXPECT_TRUE(identical(sorted(b), a));
  EXPECT_FALSE(equal(a, aff({{"i", 1}, {"j", 2}}, N + 1)));
  EXPECT_FALSE(equal(a, aff({{"i", 1}})));
  EXPECT_TRUE(mentions(a, {"j", "k"}));
  EXPECT_FALSE(mentions(a, {"k"}));
}

TEST(Affine, SubstitutesSimultaneouslyInPlace) {
  // 2*i + j + 1 with i -> j + k, j -> i: the replacement of j is not rewritten again.
  const Affine a = aff({{"i", 2}, {"j", 1}}, 1);
  const Affine r = substitute(a, {{"i", aff({{"j", 1}, {"k", 1}}, N)}, {"j", Affine::var("i")}});
  EXPECT_EQ(r.str(), "2*j + 2*k + i + (2*N + 1)");
  // Terms that cancel disappear; an index without a replacement stays where it was.
  EXPECT_EQ(substitute(aff({{"x", 1}, {"h", 1}}), {{"x", aff({{"h", -1}}, 2)}}).str(), "2");
  EXPECT_EQ(substitute(aff({{"r", 1}, {"b", 1}}), {{"r", aff({}, 3)}}).str(), "b + 3");
}

TEST(Affine, SolvesForAUnitCoefficient) {
  // y = 2*x - k + 1 solved for k: k = 2*x + 1 - y.
  const Affine e = aff({{"x", 2}, {"k", -1}}, 1);
  const Affine k = solve(e, "k", Affine::var("y"));
  EXPECT_EQ(k.str(), "-y + 2*x + 1");
  EXPECT_TRUE(equal(substitute(e, {{"k", k}}), Affine::var("y")));
  EXPECT_THROW(solve(e, "x", Affine::var("y")), InternalError);
}

// An internal error names the file in the source tree, not the build machine's
// folders (-fmacro-prefix-map, cmake/TenetOptions.cmake).
TEST(Affine, InternalErrorsNameFilesInTheSourceTree) {
  try {
    solve(aff({{"x", 2}}, 1), "x", Affine::var("y"));
    FAIL() << "no internal error";
  } catch (const InternalError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("(at ir/"), std::string::npos) << what;
    EXPECT_EQ(what.find(TENET_SOURCE_DIR), std::string::npos) << what;
  }
}

TEST(Affine, LinearFormOfIndexArithmetic) {
  // The cases both old rules agreed on.
  EXPECT_EQ(
      form(bin(BinOp::Sub, bin(BinOp::Add, idx("i"), bin(BinOp::Mul, i64(2), idx("j"))), i64(1))),
      "i + 2*j - 1");
  EXPECT_EQ(form(make_unary(UnOp::Neg, idx("i"))), "-i");
  EXPECT_EQ(form(bin(BinOp::Sub, make_size(N), idx("i"))), "-i + (N)");
  EXPECT_EQ(form(bin(BinOp::Mul, idx("i"), i64(3))), "3*i");
  EXPECT_EQ(form(bin(BinOp::Sub, idx("i"), idx("i"))), "0");
  EXPECT_EQ(form(bin(BinOp::Mul, idx("i"), idx("j"))), "not affine");
  EXPECT_EQ(form(bin(BinOp::Div, idx("i"), i64(2))), "not affine");
  EXPECT_EQ(form(bin(BinOp::Max, idx("i"), i64(2))), "not affine");
  EXPECT_EQ(form(make_const(1.5, ElemType::F32)), "not affine");
  EXPECT_EQ(form(make_cast(idx("i"), ElemType::F32)), "not affine");
}

TEST(Affine, ProductsOfSizesAreOffsetsOnlyConstantsAreCoefficients) {
  // codegen/loop_bounds.cpp's rule, now everyone's: N*M is a size, (2 + 1)*i a constant times i.
  EXPECT_EQ(form(bin(BinOp::Mul, make_size(N), make_size(M))), "M*N");
  EXPECT_EQ(form(bin(BinOp::Add, idx("i"), bin(BinOp::Mul, make_size(N), make_size(M)))),
            "i + (M*N)");
  EXPECT_EQ(form(bin(BinOp::Mul, bin(BinOp::Add, i64(2), i64(1)), idx("i"))), "3*i");
  // passes/index_facts.cpp's cases: a size times an index has no constant coefficient.
  EXPECT_EQ(form(bin(BinOp::Mul, make_size(N), idx("i"))), "not affine");
  EXPECT_EQ(form(bin(BinOp::Mul, idx("i"), make_size(N))), "not affine");
}

TEST(Affine, ComparisonsAsNonNegativeForms) {
  auto f = [](BinOp op) {
    auto a = nonnegative_form(bin(op, idx("i"), make_size(N)));
    return a ? a->str() : "none";
  };
  EXPECT_EQ(f(BinOp::Ge), "i + (-N)");
  EXPECT_EQ(f(BinOp::Gt), "i + (-N - 1)");
  EXPECT_EQ(f(BinOp::Le), "-i + (N)");
  EXPECT_EQ(f(BinOp::Lt), "-i + (N - 1)");
  EXPECT_EQ(f(BinOp::Eq), "none");
  EXPECT_EQ(f(BinOp::Ne), "none");
}

TEST(Affine, FactsDecideBoundsOnProductsOfSizes) {
  // index_facts once gave up on `i < N*M`; with the shared rule it is decided.
  passes::detail::IndexFacts facts;
  facts.add_range("i", 0, N * M);
  const Expr product = bin(BinOp::Mul, make_size(N), make_size(M));
  EXPECT_EQ(facts.decide(bin(BinOp::Lt, idx("i"), product)), std::optional<bool>(true));
  EXPECT_EQ(facts.decide(bin(BinOp::Ge, idx("i"), product)), std::optional<bool>(false));
  EXPECT_EQ(facts.decide(bin(BinOp::Lt, idx("i"), bin(BinOp::Mul, make_size(N), idx("i")))),
            std::nullopt);
  EXPECT_TRUE(facts.in_bounds(aff({{"i", 1}}), N * M));
  EXPECT_FALSE(facts.in_bounds(aff({{"i", 1}}, 1), N * M));
}

TEST(Affine, SizeExpressionsInIndices) {
  const SizeExpr y = SizeExpr::sym("y"), ky = SizeExpr::sym("ky");
  auto a = affine_in(y * 2 + ky + N - 1, {"y", "ky"});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->str(), "2*y + ky + (N - 1)");
  std::string why;
  EXPECT_FALSE(affine_in(y * N, {"y"}, &why));
  EXPECT_EQ(why, "index expression is not affine in 'y'");
  EXPECT_FALSE(affine_in(y * y, {"y"}, &why));
  EXPECT_EQ(why, "index expression is not affine: y*y");
  EXPECT_EQ(affine_in(N * 3, {"y"})->str(), "3*N");
}

TEST(Affine, ValuesReadAsWrittenByHand) {
  EXPECT_EQ(print(affine_value(aff({{"h", 1}, {"i", -2}}))), "sub(h, mul(2:int64, i))");
  EXPECT_EQ(print(affine_value(aff({{"k", -1}}, 1))), "add(neg(k), 1:int64)");
  EXPECT_EQ(print(affine_value(aff({{"g", 1}}, N * -2))), "sub(g, size(2*N))");
  EXPECT_EQ(print(affine_value(aff({}, 4))), "4:int64");
  const Affine i = aff({{"i", 1}}, N - 1);
  EXPECT_TRUE(equal(*linear_form(affine_value(i)), i));
}

TEST(Affine, PlainIndices) {
  const std::vector<Affine> p = plain_indices({{"b", 0, N}, {"c", 1, M}});
  ASSERT_EQ(p.size(), 2u);
  EXPECT_TRUE(p[0].is_plain_var() && p[0].terms[0].first == "b");
  EXPECT_TRUE(p[1].is_plain_var() && p[1].terms[0].first == "c");
}

}  // namespace
}  // namespace tenet::ir
