#include "train/metrics.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "support/error.h"

namespace tenet::train {
namespace {

double steady_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

std::string printf_text(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

void RunningMean::add(double value, double weight) {
  sum_ += value * weight;
  weight_ += weight;
}

void Accuracy::add(int64_t correct, int64_t total) {
  correct_ += correct;
  total_ += total;
}

int64_t argmax_row(const Tensor& scores, int64_t row) {
  const int64_t k = scores.shape()[1];
  const float* p = scores.data<float>() + row * k;
  int64_t best = 0;
  for (int64_t j = 1; j < k; ++j)
    if (p[j] > p[best]) best = j;
  return best;
}

int64_t count_correct(const Tensor& scores, const Tensor& labels) {
  if (scores.type() != ElemType::F32 || scores.rank() != 2 || scores.shape()[1] == 0)
    throw BindError("count_correct: scores must be float32 [B, K], got " + scores.describe());
  if (labels.type() != ElemType::I32 || labels.rank() != 1 ||
      labels.shape()[0] != scores.shape()[0])
    throw BindError("count_correct: labels must be int32 [" + std::to_string(scores.shape()[0]) +
                    "], got " + labels.describe());
  int64_t correct = 0;
  for (int64_t b = 0; b < labels.numel(); ++b)
    correct += argmax_row(scores, b) == labels.data<int32_t>()[b];
  return correct;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto total = int64_t(std::llround(seconds));
  const int64_t h = total / 3600, m = total / 60 % 60, s = total % 60;
  char buf[64];
  if (h > 0)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", (long long)h, (long long)m, (long long)s);
  else if (m > 0)
    std::snprintf(buf, sizeof buf, "%lld:%02lld", (long long)m, (long long)s);
  else
    std::snprintf(buf, sizeof buf, "%llds", (long long)s);
  return buf;
}

std::string format_rate(double per_second) {
  if (!std::isfinite(per_second) || per_second < 0) return "? img/s";
  if (per_second >= 100) return printf_text("%.0f img/s", per_second);
  if (per_second >= 10) return printf_text("%.1f img/s", per_second);
  return printf_text("%.2f img/s", per_second);
}

// ---- ProgressReporter ----------------------------------------------------

ProgressReporter::ProgressReporter(std::FILE* out, ProgressOptions options)
    : ProgressReporter(out, options, ::isatty(::fileno(out)) == 1) {}

ProgressReporter::ProgressReporter(std::FILE* out, ProgressOptions options, bool tty)
    : out_(out), options_(std::move(options)), tty_(tty) {
  if (options_.total_steps <= 0)
    throw BindError("progress: total steps must be positive, got " +
                    std::to_string(options_.total_steps));
  if (options_.first_step < 0 || options_.first_step > options_.total_steps)
    throw BindError("progress: the first step must be in [0, " +
                    std::to_string(options_.total_steps) + "], got " +
                    std::to_string(options_.first_step));
  if (!options_.clock) options_.clock = steady_seconds;
  start_ = options_.clock();
}

void ProgressReporter::update(int64_t step, int64_t images, double loss, double accuracy) {
  step_ = step;
  images_ = images;
  loss_ = loss;
  accuracy_ = accuracy;
  const double now = options_.clock();
  const bool last = step >= options_.total_steps;
  const double interval = tty_ ? options_.tty_interval_s : options_.line_interval_s;
  if (!last && now - last_draw_ < interval) return;
  last_draw_ = now;
  draw();
  drawn_step_ = step;
}

void ProgressReporter::finish() {
  if (finished_) return;
  finished_ = true;
  if (drawn_step_ != step_ || drawn_step_ < 0) draw();  // the final state, unless just drawn
  if (tty_) std::fputc('\n', out_);
  std::fflush(out_);
}

std::string ProgressReporter::status_text() const {
  const std::string label = options_.label.empty() ? "" : options_.label + " ";
  return label + counters();
}

std::string ProgressReporter::counters() const {
  const double elapsed = options_.clock() - start_;
  std::string s = std::to_string(step_) + "/" + std::to_string(options_.total_steps);
  s += printf_text(" loss %.4f", loss_);
  s += printf_text(" acc %.2f%%", 100.0 * accuracy_);
  if (elapsed > 0 && images_ > 0) s += " " + format_rate(double(images_) / elapsed);
  const int64_t timed_steps = step_ - options_.first_step;
  if (timed_steps > 0 && step_ < options_.total_steps)
    s += " ETA " +
         format_duration(elapsed / double(timed_steps) * double(options_.total_steps - step_));
  else if (step_ >= options_.total_steps)
    s += " in " + format_duration(elapsed);
  return s;
}

std::string ProgressReporter::bar() const {
  constexpr int64_t width = 24;
  const int64_t filled = std::clamp<int64_t>(step_ * width / options_.total_steps, 0, width);
  return "[" + std::string(size_t(filled), '#') + std::string(size_t(width - filled), '.') + "]";
}

void ProgressReporter::draw() {
  if (tty_) {
    const std::string label = options_.label.empty() ? "" : options_.label + " ";
    // "\033[K" clears what a longer previous line left on the right.
    std::fprintf(out_, "\r%s%s %s\033[K", label.c_str(), bar().c_str(), counters().c_str());
  } else {
    std::fprintf(out_, "%s\n", status_text().c_str());
  }
  std::fflush(out_);
}

}  // namespace tenet::train
