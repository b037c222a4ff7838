// The small pieces of C++ text the backend is built from: literals, size
// expressions, identifiers and line breaking.
#include "codegen/c_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "codegen/code_writer.h"

namespace tenet::codegen::detail {
namespace {

using ir::SizeExpr;

TEST(CText, LiteralsAreExactlyTyped) {
  EXPECT_EQ(literal(1, ElemType::F32).text, "1.0f");
  EXPECT_EQ(literal(1e-7, ElemType::F32).text, "1e-7f");
  EXPECT_EQ(literal(0.1, ElemType::F32).text, "0.1f");
  EXPECT_EQ(literal(0.1, ElemType::F64).text, "0.1");
  EXPECT_EQ(literal(-2.5, ElemType::F64).text, "-2.5");
  EXPECT_EQ(literal(-2.5, ElemType::F64).prec, kPrecUnary);
  EXPECT_EQ(literal(1e20, ElemType::F64).text, "1e20");
  EXPECT_EQ(literal(3, ElemType::I32).text, "3");
  EXPECT_EQ(literal(1, ElemType::Bool).text, "true");
  EXPECT_EQ(literal(INFINITY, ElemType::F32).text, "std::numeric_limits<float>::infinity()");
  EXPECT_EQ(literal(-INFINITY, ElemType::F64).text, "-std::numeric_limits<double>::infinity()");
  EXPECT_EQ(literal(NAN, ElemType::F32).text, "std::numeric_limits<float>::quiet_NaN()");
  // Shortest text that reads back to the same float.
  EXPECT_EQ(literal(double(0.3f), ElemType::F32).text, "0.3f");
  EXPECT_EQ(std::stof(literal(16777217.0, ElemType::F32).text), 16777216.0f);
  // Issue 13: a float32 constant beyond float's range was printed "inf.0f".
  EXPECT_EQ(literal(1e39, ElemType::F32).text, "std::numeric_limits<float>::infinity()");
  EXPECT_EQ(literal(-1e39, ElemType::F32).text, "-std::numeric_limits<float>::infinity()");
}

TEST(CText, FloatLiteralsReadBackExactly) {
  // Extremes, subnormals and values that need every digit: the text, read
  // back as the literal's type, is the same value bit for bit.
  const std::vector<double> values = {3.4028234663852886e38,
                                      1.1754943508222875e-38,
                                      1e-45,
                                      1.401298464324817e-45,
                                      0.1,
                                      1.0 / 3,
                                      16777215.0,
                                      2.2250738585072014e-308,
                                      4.9406564584124654e-324,
                                      1.7976931348623157e308,
                                      0.30000000000000004};
  for (double v : values) {
    if (std::isfinite(float(v))) {
      const std::string f = literal(v, ElemType::F32).text;
      ASSERT_EQ(f.back(), 'f') << f;
      EXPECT_EQ(std::strtof(f.c_str(), nullptr), float(v)) << f;
    }
    const std::string d = literal(v, ElemType::F64).text;
    EXPECT_EQ(std::strtod(d.c_str(), nullptr), v) << d;
    EXPECT_TRUE(d.find('.') != std::string::npos || d.find('e') != std::string::npos) << d;
  }
}

TEST(CText, CommentTextCannotEndItsComment) {
  EXPECT_EQ(comment_text("models/mnist.tn"), "models/mnist.tn");
  EXPECT_EQ(comment_text("a\nint x;\r\x01"), "a\\nint x;\\x0d\\x01");
  EXPECT_EQ(comment_text("dir*/x.tn"), "dir*\\/x.tn");
  EXPECT_EQ(comment_text("C:\\x\\"), "C:\\\\x\\\\");  // no line splice at the end
}

TEST(CText, SizesUseFloorDivision) {
  SizeExpr H = SizeExpr::sym("H"), W = SizeExpr::sym("W"), N = SizeExpr::sym("N");
  EXPECT_EQ(size_to_c(H, {}).text, "H");
  EXPECT_EQ(size_to_c(H - 8, {}).text, "H - 8");
  EXPECT_EQ(size_to_c(SizeExpr::floordiv(H - 9, 2) + 1, {}).text,
            "tenet::floordiv<int64_t>(H - 9, 2) + 1");
  EXPECT_EQ(size_to_c(SizeExpr::min(N, W) * 2, {}).text, "2 * std::min<int64_t>(N, W)");
  EXPECT_EQ(size_to_c(N * W - H, {}).text, "N * W - H");
  EXPECT_EQ(size_to_c(SizeExpr(-3), {}).text, "-3");
  EXPECT_EQ(size_to_c(H + 1, {{"H", "H_1"}}).text, "H_1 + 1");
  EXPECT_EQ(size_to_c(N * SizeExpr::floordiv(H, 2), {}).text, "tenet::floordiv<int64_t>(H, 2) * N");
  SizeExpr A = SizeExpr::sym("A"), Z = SizeExpr::sym("Z");
  EXPECT_EQ(size_to_c(A * SizeExpr::floordiv(Z, 2), {}).text, "A * tenet::floordiv<int64_t>(Z, 2)");
  EXPECT_EQ(size_to_c(SizeExpr::floordiv(A * Z, 2), {}).text, "tenet::floordiv<int64_t>(A * Z, 2)");
}

TEST(CText, NamerPrefixesEveryNameOfTheProgram) {
  Namer names;
  EXPECT_EQ(names.take("b"), "t_b");
  EXPECT_EQ(names.take("b"), "t_b_1");
  EXPECT_EQ(names.take("b.1"), "t_b_1_1");
  EXPECT_EQ(names.take("int"), "t_int");
  EXPECT_EQ(names.take("_Hidden"), "t_Hidden");
  EXPECT_EQ(names.take("a__b"), "t_a_b");
  EXPECT_EQ(names.take("a_b"), "t_a_b_1");
  EXPECT_EQ(names.take("2x"), "t_2x");
  EXPECT_EQ(names.take("__"), "t_");
  EXPECT_EQ(names.take("workspace"), "t_workspace");
  // Derived and Tenet's own names are used as they are, when free.
  EXPECT_EQ(names.take_derived("t_b_stride0"), "t_b_stride0");
  EXPECT_EQ(names.take_derived("t_b_stride0"), "t_b_stride0_1");
  EXPECT_EQ(names.take_derived("t_" + std::string("_stride0")), "t_stride0");
  EXPECT_EQ(names.take_derived("gemm_m"), "gemm_m");
  EXPECT_EQ(names.take("gemm_m"), "t_gemm_m");
}

TEST(CText, LongLinesBreakLikeClangFormat) {
  EXPECT_EQ(break_line("int x = f(a, b);", 2, 100), "  int x = f(a, b);\n");
  EXPECT_EQ(
      break_line("y = first_function_name(argument_one, argument_two, argument_three);", 0, 60),
      "y = first_function_name(argument_one, argument_two,\n"
      "                        argument_three);\n");
  EXPECT_EQ(
      break_line("y = first_function_name(argument_one, argument_two, argument_three);", 0, 40),
      "y = first_function_name(argument_one,\n"
      "                        argument_two,\n"
      "                        argument_three);\n");
  // Aligning with a '(' far to the right would leave no room: indent instead.
  EXPECT_EQ(break_line("y = a_very_long_function_name_here(one, two);", 0, 40),
            "y = a_very_long_function_name_here(one,\n"
            "    two);\n");
  EXPECT_EQ(
      break_line("acc += aaaaaaaaaaaaaaaa[i + 1] * bbbbbbbbbbbbbbbbbb[j];  // a, b, c", 2, 40),
      "  acc += aaaaaaaaaaaaaaaa[i + 1] *\n"
      "      bbbbbbbbbbbbbbbbbb[j];  // a, b, c\n");
  // No break inside a string literal.
  EXPECT_EQ(break_line("s = \"a, b, c, d, e, f, g\";", 0, 10),
            "s =\n    \"a, b, c, d, e, f, g\";\n");
  // After an assignment only when the right side then fits on one line.
  EXPECT_EQ(break_line("target[i] = aaaaaaaaaa[i] + bbbbbbbbbb[i];", 0, 40),
            "target[i] =\n    aaaaaaaaaa[i] + bbbbbbbbbb[i];\n");
}

}  // namespace
}  // namespace tenet::codegen::detail
