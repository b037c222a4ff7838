/// \file
/// Golden-file checks: compare text with tests/golden/<name>. On a mismatch the
/// test fails and prints `diff -u`. Run with TENET_UPDATE_GOLDENS=1 (or
/// scripts/update-goldens.sh) to rewrite the files instead.
#pragma once

#include <string>

namespace tenet::testing {

/// Absolute path of a file in the source tree, e.g. source_path("models/matmul.tn").
std::string source_path(const std::string& relative);
std::string read_file(const std::string& path);

/// EXPECTs `actual` to equal the golden file tests/golden/<name>.
void expect_golden(const std::string& name, const std::string& actual);
/// The same for a golden file anywhere in the source tree (`path` relative to
/// it, e.g. "tests/passes/dce.ir.golden").
void expect_golden_file(const std::string& path, const std::string& actual);

/// Runs a shell command, returns its exit code and combined output.
struct CommandResult {
  int exit_code;
  std::string out;  // stdout
  std::string err;  // stderr
};
CommandResult run_command(const std::string& command);
/// Path of the built `tenet` binary.
std::string tenet_binary();

}  // namespace tenet::testing
