/// \file
/// Replays the inputs kept in tests/fuzz/regressions/<target>/ through the
/// target's check (checks.h) inside a GoogleTest: an escaping exception is a
/// test failure naming the file.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/golden.h"

namespace tenet::fuzz {

/// Returns the number of inputs replayed.
template <typename Check>
int replay_regressions(const std::string& target, Check&& check) {
  namespace fs = std::filesystem;
  const fs::path dir = tenet::testing::source_path("tests/fuzz/regressions/" + target);
  int replayed = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    try {
      check(tenet::testing::read_file(entry.path().string()));
    } catch (const std::exception& e) {
      ADD_FAILURE() << target << "/" << entry.path().filename().string() << ": " << e.what();
    }
    ++replayed;
  }
  return replayed;
}

}  // namespace tenet::fuzz
