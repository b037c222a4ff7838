/// \file
/// Helpers for the end-to-end tests of `tenet train`, `eval` and `predict`:
/// a scratch directory per test, running the CLI (to completion, or as a
/// child process that the test kills), and reading what a run leaves behind
/// (log.csv rows, checkpoint tensors).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/golden.h"
#include "train/named_tensors.h"

namespace tenet::testing {

/// One row of a run's log.csv.
struct LogRow {
  int64_t epoch = 0, step = 0;
  std::string split;  // "train" or "test"
  double loss = 0, accuracy = 0, lr = 0;
  std::string line;  // the row without its timing columns
};
std::vector<LogRow> read_log(const std::string& path);

/// The parameters of a checkpoint (every tensor not under optimizer/ or train/).
train::NamedTensors checkpoint_parameters(const std::string& path);

/// The CMake options (" -DTENET_DNNL=... -DTENET_BLAS=...") that make an
/// emitted project link the GEMM libraries the environment chooses for
/// `tenet train`'s JIT (jit/jit.h; CMake finds the default ones by itself),
/// so that both take the same steps.
std::string gemm_library_options();

/// A scratch directory per test, removed afterwards, and the CLI run from
/// the source tree (so models/ and tests/training/data/ resolve).
class Training : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  /// Runs `tenet ARGS` from the source tree, with single-threaded OpenMP
  /// (results do not depend on it; it keeps the runs quick on a loaded
  /// machine) and the suite's JIT cache.
  CommandResult tenet(const std::string& args) const;
  /// Writes a file into the scratch directory and returns its path.
  std::string write(const std::string& name, const std::string& text) const;
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

/// Starts `tenet ARGS` as a child process (from the source tree, OpenMP on
/// one thread) and SIGKILLs it as soon as its output contains `marker`.
/// Returns the output read until then; `killed` is false when the child
/// ended by itself before the marker appeared.
struct KilledRun {
  std::string out;
  bool killed = false;
};
KilledRun run_and_kill_at(const std::vector<std::string>& args, const std::string& marker);

}  // namespace tenet::testing
