/// \file
/// The files a training run keeps in its run directory besides checkpoints:
/// the curve log (log.csv) and the lock that keeps a second run out.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace tenet::train {

/// The CSV log: rewritten on resume to the rows the checkpoint had seen.
class CurveLog {
 public:
  /// A BindError when `path` is not a regular file or cannot be written.
  CurveLog(const std::string& path, int64_t resume_step, int64_t completed_epochs);
  void row(int64_t epoch, int64_t step, const char* split, double loss, double accuracy, double lr,
           double images_per_second, double elapsed);

 private:
  /// Train rows up to the checkpoint's step; test rows of completed epochs;
  /// nothing that does not parse (a log edited by hand).
  static bool keep(const std::string& line, int64_t step, int64_t completed_epochs);

  std::string path_;
  std::ofstream out_;
};

/// An exclusive flock on RUNDIR/.lock for as long as a run writes there, so
/// that a second run given the same folder fails at once instead of both
/// interleaving log.csv and checkpoints. The kernel drops it when the
/// process dies; the descriptor is close-on-exec, so the compilers a run
/// starts do not hold it.
class RunDirLock {
 public:
  RunDirLock() = default;
  RunDirLock(const RunDirLock&) = delete;
  RunDirLock& operator=(const RunDirLock&) = delete;
  ~RunDirLock();
  /// A BindError naming `out_option` when another run holds it or it cannot be made.
  void take(const std::string& dir, const std::string& out_option);

 private:
  int fd_ = -1;
};

}  // namespace tenet::train
