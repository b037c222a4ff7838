/// \file
/// Helpers for the end-to-end tests of the `tenet` command line: a scratch
/// directory per test, and running the binary from it or from the source
/// tree (so that paths in diagnostics are relative and goldens stable).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "tests/support/golden.h"

namespace tenet::testing {

inline std::string tenet_cmd(const std::string& args) {
  return tenet_binary() + " " + args;
}

/// A scratch directory per test, removed afterwards.
class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        std::filesystem::temp_directory_path() / ("tenet-cli-" + std::to_string(::getpid()) + "-" +
                                                  test->test_suite_name() + "-" + test->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::filesystem::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  /// Runs tenet in the scratch dir, so goldens do not contain temp names.
  CommandResult run_in_dir(const std::string& args) {
    return run_command("cd " + dir_.string() + " && " + tenet_cmd(args));
  }
  /// Runs tenet in the source tree, on files such as models/softmax.tn.
  CommandResult run_in_source(const std::string& args, const std::string& env = "") {
    return run_command("cd " + source_path("") + " && " + env + (env.empty() ? "" : " ") +
                       tenet_cmd(args));
  }
  std::filesystem::path dir_;
};

/// The "checksum: ..." lines of `tenet run` output.
inline std::string checksum_lines(const std::string& out) {
  std::string lines;
  std::regex re("checksum: .*");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator();
       ++it)
    lines += it->str() + "\n";
  return lines;
}

}  // namespace tenet::testing
