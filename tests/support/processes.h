/// \file
/// What the tests of signals during a JIT compile share: a stand-in for the
/// C++ compiler that never finishes and says which processes it is, and the
/// polling to watch them.
#pragma once

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "tests/support/golden.h"

namespace tenet::testing {

/// A "compiler" (a shell script) that answers --version, then starts a child,
/// writes its own pid and the child's to $TENET_TEST_DIR/compiler.pid and
/// child.pid, and waits for the child (300 s).
inline constexpr const char* kSlowCompilerScript =
    "#!/bin/sh\n"
    "if [ \"$1\" = \"--version\" ]; then echo slow; exit 0; fi\n"
    "sleep 300 &\n"
    "echo $! > \"$TENET_TEST_DIR/child.pid\"\n"
    "echo $$ > \"$TENET_TEST_DIR/compiler.pid\"\n"
    "wait\n";

/// Polls `done()` every 20 ms for up to `seconds`; returns its last answer.
template <typename F>
bool wait_for(F done, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

/// The pid written in `file`, or 0 while it does not exist.
inline long pid_in(const std::filesystem::path& file) {
  return std::filesystem::exists(file) ? std::atol(read_file(file.string()).c_str()) : 0;
}

}  // namespace tenet::testing
