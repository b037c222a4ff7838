// The checker's diagnostics: one golden per error class pinning the exact
// rendered text (header, source line, caret and underline, notes), from the
// samples in tests/lang/data/check/, plus a test that independent errors are
// reported together.
#include <gtest/gtest.h>

#include <string>

#include "lang/check.h"
#include "support/diagnostics.h"
#include "tests/lang/check_util.h"
#include "tests/support/golden.h"

namespace tenet::lang {
namespace {

// The sample under its path relative to the source tree, so goldens are stable.
SourceFile sample(const std::string& name) {
  std::string relative = "tests/lang/data/check/" + name + ".tn";
  return SourceFile(relative, tenet::testing::read_file(tenet::testing::source_path(relative)));
}

std::string error_text(const SourceFile& file) {
  try {
    compile_source(file);
  } catch (const CompileError& e) {
    return e.what();
  }
  ADD_FAILURE() << file.path() << " compiled without an error";
  return "";
}

class ErrorGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(ErrorGolden, RendersExactly) {
  std::string name = GetParam();
  tenet::testing::expect_golden("lang/check/" + name + ".txt", error_text(sample(name)) + "\n");
}

INSTANTIATE_TEST_SUITE_P(Classes, ErrorGolden,
                         ::testing::Values("syntax_error", "unknown_name", "redefinition",
                                           "rank_mismatch", "size_mismatch", "ambiguous_range",
                                           "cannot_infer", "empty_range", "out_of_bounds",
                                           "type_mismatch", "call_arity", "call_size_mismatch",
                                           "recursion", "loop_trip", "right_only_assign",
                                           "duplicate_lhs_index", "assign_input",
                                           "non_integer_index", "undefined_output",
                                           "inline_out_of_bounds", "loop_var_type",
                                           "several_errors", "literal_range", "reshape_count"));

// Independent errors in one function and in another are all reported, in
// source order, and an error does not cause follow-on errors downstream.
TEST(CheckErrors, ReportsIndependentErrorsTogether) {
  std::string text = error_text(sample("several_errors"));
  EXPECT_NE(text.find("several_errors.tn:2:17: error: unknown name 'unknown'"), std::string::npos);
  EXPECT_NE(text.find("several_errors.tn:3:10: error: rank mismatch"), std::string::npos);
  EXPECT_NE(text.find("several_errors.tn:8:17: error: type mismatch"), std::string::npos);
  EXPECT_LT(text.find(":2:17:"), text.find(":3:10:"));
  EXPECT_LT(text.find(":3:10:"), text.find(":8:17:"));
  // 'a' and 'b' failed, but 'y' (which reads neither) is fine: three errors only.
  size_t errors = 0;
  for (size_t at = text.find(": error: "); at != std::string::npos;
       at = text.find(": error: ", at + 1))
    ++errors;
  EXPECT_EQ(errors, 3u) << text;
}

TEST(CheckErrors, ReadingAFailedTensorIsQuiet) {
  std::string text = tenet::testing::check_error(R"(
def f(float(N) x) -> (z) {
  a(i) = x(i) * undefined_thing
  b(i) = a(i) + 1
  z(i) = b(i) * a(i)
})");
  EXPECT_NE(text.find("unknown name 'undefined_thing'"), std::string::npos);
  EXPECT_EQ(text.find("error", text.find("error") + 1), std::string::npos) << text;
}

}  // namespace
}  // namespace tenet::lang
