/// \file
/// Training metrics and progress output: running means, accuracy counting,
/// throughput, ETA formatting, and a progress reporter that redraws one line
/// on a terminal and prints plain periodic lines otherwise (logs, CI).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

#include "support/tensor.h"

namespace tenet::train {

/// A mean of values added one at a time, optionally weighted (e.g. by batch size).
class RunningMean {
 public:
  void add(double value, double weight = 1.0);
  /// 0 before anything was added.
  double mean() const { return weight_ > 0 ? sum_ / weight_ : 0.0; }
  double weight() const { return weight_; }
  void reset() { sum_ = weight_ = 0; }

 private:
  double sum_ = 0, weight_ = 0;
};

/// Correct / total over batches.
class Accuracy {
 public:
  void add(int64_t correct, int64_t total);
  /// In [0, 1]; 0 before anything was added.
  double value() const { return total_ > 0 ? double(correct_) / double(total_) : 0.0; }
  int64_t correct() const { return correct_; }
  int64_t total() const { return total_; }
  void reset() { correct_ = total_ = 0; }

 private:
  int64_t correct_ = 0, total_ = 0;
};

/// Row-wise argmax of float32 scores [B, K] (ties: the lowest index).
int64_t argmax_row(const Tensor& scores, int64_t row);
/// How many rows of scores [B, K] have their argmax equal to labels [B] (int32).
/// A BindError when the shapes disagree.
int64_t count_correct(const Tensor& scores, const Tensor& labels);

/// "42s", "3:05" (m:ss), "1:02:03" (h:mm:ss); "?" for negative or non-finite.
std::string format_duration(double seconds);
/// "1234 img/s", "12.3 img/s", "0.12 img/s" (3 significant digits, at least an integer).
std::string format_rate(double per_second);

struct ProgressOptions {
  std::string label{};      // printed first, e.g. "epoch 3/30"
  int64_t total_steps = 0;  // steps in this run of the bar (> 0)
  /// Steps already done when the bar starts (an epoch resumed mid-way): the
  /// ETA extrapolates from the steps this run has timed, not from these.
  int64_t first_step = 0;
  /// When to redraw: the terminal line at most every `tty_interval_s`, plain
  /// lines every `line_interval_s` (and always for the last step).
  double tty_interval_s = 0.1;
  double line_interval_s = 10.0;
  /// Seconds since an arbitrary origin; default: a steady clock. Tests inject one.
  std::function<double()> clock{};
};

/// Draws "epoch 3/30 [#######.....] 70/100 loss 0.0312 acc 98.91% 812 img/s ETA 0:04"
/// with '\r' on a TTY (isatty of the stream's descriptor), or prints the same
/// text (without the bar) as one line per interval otherwise.
class ProgressReporter {
 public:
  /// `tty` forces the mode; by default it is isatty(fileno(out)).
  ProgressReporter(std::FILE* out, ProgressOptions options);
  ProgressReporter(std::FILE* out, ProgressOptions options, bool tty);

  /// Reports that `step` of total_steps are done (1-based), with `images`
  /// processed so far in this run and the running loss and accuracy.
  void update(int64_t step, int64_t images, double loss, double accuracy);
  /// Ends the bar: prints the final state and a newline on a TTY.
  void finish();

  /// The text of the current state (no bar, no '\r'), as printed in line mode.
  std::string status_text() const;
  bool tty() const { return tty_; }

 private:
  std::string counters() const;
  std::string bar() const;
  void draw();

  std::FILE* out_;
  ProgressOptions options_;
  bool tty_;
  double start_ = 0, last_draw_ = -1e300;  // seconds (options_.clock)
  int64_t step_ = 0, images_ = 0;
  double loss_ = 0, accuracy_ = 0;
  int64_t drawn_step_ = -1;  // the step last drawn, -1 before the first
  bool finished_ = false;
};

}  // namespace tenet::train
