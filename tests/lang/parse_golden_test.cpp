// Golden tests of the parser: ast::print of the sample programs (and that
// printing is a fixed point of parse . print), and the exact rendered text of
// one syntax error per class.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "lang/ast.h"
#include "lang/parser.h"
#include "tests/support/golden.h"

namespace tenet::lang {
namespace {

const char* kDataDir = "tests/lang/data/parse/";

// The file under its path relative to the source tree, so goldens are stable.
SourceFile sample(const std::string& name) {
  std::string relative = kDataDir + name;
  return SourceFile(relative, tenet::testing::read_file(tenet::testing::source_path(relative)));
}

std::string print_file(const SourceFile& file) {
  return ast::print(parse(file));
}

class PrintGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(PrintGolden, MatchesAndRoundTrips) {
  std::string name = GetParam();
  std::string printed = print_file(sample(name + ".tn"));
  tenet::testing::expect_golden("lang/parse/print_" + name + ".txt", printed);
  EXPECT_EQ(print_file(SourceFile("printed.tn", printed)), printed);
}

INSTANTIATE_TEST_SUITE_P(Samples, PrintGolden,
                         ::testing::Values("squash", "conv_stride2", "softmax", "routing",
                                           "everything"));

// Every sample that parses prints to a fixed point: parse(print(parse(src)))
// prints exactly as parse(src).
TEST(PrintRoundTrip, EverySample) {
  namespace fs = std::filesystem;
  int count = 0;
  for (const auto& entry : fs::directory_iterator(tenet::testing::source_path(kDataDir))) {
    std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".tn" || name.rfind("err_", 0) == 0) continue;
    std::string printed = print_file(sample(name));
    EXPECT_EQ(print_file(SourceFile("printed.tn", printed)), printed) << name;
    ++count;
  }
  EXPECT_GE(count, 5);
}

TEST(PrintRoundTrip, NumbersKeepTheirValueAndKind) {
  SourceFile file(
      "n.tn",
      "def f(float x) -> (y) { y = 0.1 + 1e-7 + 2.0 + 3 + 1e300 + 123456789012 + "
      "4.9e-324 + 1.7976931348623157e308 + 0.30000000000000004 + 1e22 + 10000000000000000000000 }");
  std::string printed = print_file(file);
  EXPECT_NE(printed.find("y = 0.1 + 1e-07 + 2.0 + 3 + 1e+300 + 123456789012 + 5e-324 + "
                         "1.7976931348623157e+308 + 0.30000000000000004 + 1e+22 + "
                         "10000000000000000000000\n"),
            std::string::npos)
      << printed;
  EXPECT_EQ(print_file(SourceFile("printed.tn", printed)), printed);
}

TEST(PrintRoundTrip, MinimalParentheses) {
  SourceFile file("p.tn",
                  "def f(float a, float b, float c) -> (y) {\n"
                  "  y = ((a + b) + c) - (a - (b - c)) * ((a * b) / (c / a)) + -(-a) + -(a + b)\n"
                  "  y = ((a < b) == (b < c)) || (a > b && (b > c || c > a)) && !(a == b)\n"
                  "}\n");
  EXPECT_EQ(print_file(file),
            "def f(float32 a, float32 b, float32 c) -> (y) {\n"
            "  y = a + b + c - (a - (b - c)) * (a * b / (c / a)) + --a + -(a + b)\n"
            "  y = (a < b) == (b < c) || a > b && (b > c || c > a) && !(a == b)\n"
            "}\n");
}

class SyntaxErrorGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(SyntaxErrorGolden, RendersExactly) {
  std::string name = GetParam();
  SourceFile file = sample("err_" + name + ".tn");
  try {
    parse(file);
    ADD_FAILURE() << "err_" << name << ".tn parsed without an error";
  } catch (const CompileError& e) {
    tenet::testing::expect_golden("lang/parse/error_" + name + ".txt",
                                  std::string(e.what()) + "\n");
  }
}

INSTANTIATE_TEST_SUITE_P(Classes, SyntaxErrorGolden,
                         ::testing::Values("missing_paren", "missing_brace", "bad_token",
                                           "lhs_expression", "builtin_arity", "tuple_not_call",
                                           "malformed_number", "unexpected_end",
                                           "chained_comparison", "call_argument", "missing_arrow"));

}  // namespace
}  // namespace tenet::lang
