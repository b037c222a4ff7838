// The parser on hostile input: nesting limits, every prefix of a real
// program, and seeded random mutations. Each input must either parse (and then
// print to a fixed point) or throw CompileError; nothing else may escape.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "lang/ast.h"
#include "lang/parser.h"
#include "tests/support/golden.h"

namespace tenet::lang {
namespace {

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// The message of the CompileError that parsing `text` throws ("" if none).
std::string error_of(const std::string& text) {
  try {
    parse(SourceFile("deep.tn", text));
  } catch (const CompileError& e) {
    return e.what();
  }
  return "";
}

std::string with_value(const std::string& rhs) {
  return "def f(float x) -> (y) {\n  y = " + rhs + "\n}\n";
}

TEST(ParseLimits, ExpressionNesting) {
  const std::string too_deep = "expression nested too deeply (the limit is 256 levels)";
  EXPECT_EQ(error_of(with_value(repeat("(", 200) + "x" + repeat(")", 200))), "");
  EXPECT_NE(error_of(with_value(repeat("(", 300) + "x" + repeat(")", 300))).find(too_deep),
            std::string::npos);
  EXPECT_NE(error_of(with_value(repeat("-", 2000) + "x")).find(too_deep), std::string::npos);
  EXPECT_NE(error_of(with_value(repeat("exp(", 2000))).find(too_deep), std::string::npos);
  EXPECT_NE(error_of(with_value(repeat("x(", 2000))).find(too_deep), std::string::npos);
  // A long flat chain builds a deep tree without deep recursion: bounded too.
  EXPECT_EQ(error_of(with_value("x" + repeat(" + x", 200))), "");
  EXPECT_NE(error_of(with_value("x" + repeat(" + x", 2000))).find(too_deep), std::string::npos);
}

TEST(ParseLimits, LoopNesting) {
  auto loops = [](int n) {
    return "def f(float x) -> (y) {\n" + repeat("for i in 0:2 {\n", n) + "y = x\n" +
           repeat("}\n", n) + "}\n";
  };
  EXPECT_EQ(error_of(loops(100)), "");
  EXPECT_NE(error_of(loops(2000)).find("for loops nested too deeply (the limit is 256)"),
            std::string::npos);
}

// Parses `text`; fails the test on anything but success or CompileError.
void expect_parses_or_reports(const std::string& text, const std::string& what) {
  try {
    ast::File program = parse(SourceFile("fuzz.tn", text));
    std::string printed = ast::print(program);
    EXPECT_EQ(ast::print(parse(SourceFile("printed.tn", printed))), printed) << what;
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("error: "), std::string::npos) << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << " threw " << e.what();
  }
}

std::string routing_source() {
  return tenet::testing::read_file(tenet::testing::source_path("tests/lang/data/parse/routing.tn"));
}

TEST(ParseRobustness, EveryPrefixOfARealProgram) {
  std::string text = routing_source();
  ASSERT_GT(text.size(), 500u);
  // Every third cut, to keep the test fast; the cuts still land inside and
  // between every kind of token.
  for (size_t n = 0; n <= text.size(); n += 3)
    expect_parses_or_reports(text.substr(0, n), "prefix of length " + std::to_string(n));
}

TEST(ParseRobustness, SeededMutations) {
  std::string text = routing_source();
  const std::string alphabet = "(){},:;?+-*/<>=!&|#.eE0123456789 \n\tabxyz_max=!min=!def for in";
  std::mt19937 rng(12345);
  for (int round = 0; round < 500; ++round) {
    std::string s = text;
    int edits = 1 + int(rng() % 4);
    for (int k = 0; k < edits && !s.empty(); ++k) {
      size_t at = rng() % s.size();
      switch (rng() % 4) {
        case 0:
          s.erase(at, 1 + rng() % 8);
          break;
        case 1:
          s.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
        case 2:
          s[at] = char(rng() % 256);
          break;
        default:
          s.insert(at, s.substr(rng() % s.size(), rng() % 16));
          break;
      }
    }
    expect_parses_or_reports(s, "mutation round " + std::to_string(round));
  }
}

TEST(ParseRobustness, RandomBytes) {
  std::mt19937 rng(99);
  for (int round = 0; round < 2000; ++round) {
    std::string s(rng() % 64, '\0');
    for (char& c : s) c = char(rng() % 256);
    expect_parses_or_reports(s, "random round " + std::to_string(round));
  }
}

}  // namespace
}  // namespace tenet::lang
