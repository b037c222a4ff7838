// Metrics: running means, accuracy counting, duration and rate formatting,
// and the progress reporter's exact output in terminal and line modes (with
// an injected clock).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "tests/train/train_test_util.h"
#include "train/metrics.h"

namespace tenet::train {
namespace {

using testing::expect_error;

TEST(Metrics, RunningMeanAndAccuracy) {
  RunningMean loss;
  EXPECT_EQ(loss.mean(), 0.0);
  loss.add(1.0, 100);
  loss.add(4.0, 50);
  EXPECT_DOUBLE_EQ(loss.mean(), 2.0);
  EXPECT_EQ(loss.weight(), 150);
  loss.reset();
  loss.add(3);
  EXPECT_EQ(loss.mean(), 3.0);
  Accuracy acc;
  EXPECT_EQ(acc.value(), 0.0);
  acc.add(90, 100);
  acc.add(10, 100);
  EXPECT_DOUBLE_EQ(acc.value(), 0.5);
  EXPECT_EQ(acc.total(), 200);
}

TEST(Metrics, CountCorrect) {
  Tensor scores(ElemType::F32, {3, 4});
  const float values[] = {0.1f, 0.2f,  0.9f, 0.3f,   // argmax 2
                          0.5f, 0.1f,  0.1f, 0.5f,   // tie: the lowest index, 0
                          -1.f, -0.5f, -2.f, -3.f};  // argmax 1
  for (int i = 0; i < 12; ++i) scores.data<float>()[i] = values[i];
  Tensor labels(ElemType::I32, {3});
  labels.data<int32_t>()[0] = 2;
  labels.data<int32_t>()[1] = 3;
  labels.data<int32_t>()[2] = 1;
  EXPECT_EQ(argmax_row(scores, 1), 0);
  EXPECT_EQ(count_correct(scores, labels), 2);
  expect_error([&] { count_correct(scores, Tensor(ElemType::I32, {2})); },
               {"labels must be int32 [3], got int32[2]"});
  expect_error(
      [&] {
        count_correct(Tensor(ElemType::F64, {3, 4}), labels);
      },
      {"scores must be float32 [B, K], got float64[3, 4]"});
}

TEST(Metrics, Formatting) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(42.4), "42s");
  EXPECT_EQ(format_duration(59.6), "1:00");
  EXPECT_EQ(format_duration(185), "3:05");
  EXPECT_EQ(format_duration(3723), "1:02:03");
  EXPECT_EQ(format_duration(-1), "?");
  EXPECT_EQ(format_duration(INFINITY), "?");
  EXPECT_EQ(format_rate(1234.4), "1234 img/s");
  EXPECT_EQ(format_rate(12.34), "12.3 img/s");
  EXPECT_EQ(format_rate(0.123), "0.12 img/s");
  EXPECT_EQ(format_rate(NAN), "? img/s");
}

// What a reporter wrote into a temporary file.
std::string contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  int c;
  while ((c = std::fgetc(f)) != EOF) s += char(c);
  return s;
}

TEST(Progress, LineModePrintsPeriodicLines) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  double now = 0;
  ProgressReporter p(f,
                     {.label = "epoch 1/2", .total_steps = 4, .line_interval_s = 10, .clock = [&] {
                        return now;
                      }});
  EXPECT_FALSE(p.tty());  // a file is not a terminal
  now = 1;
  p.update(1, 100, 0.5, 0.25);
  now = 2;
  p.update(2, 200, 0.45, 0.4);  // within the interval: silent
  now = 12;
  p.update(3, 300, 0.4, 0.5);
  now = 16;
  p.update(4, 400, 0.3, 0.75);  // the last step always prints
  p.finish();
  EXPECT_EQ(contents(f),
            "epoch 1/2 1/4 loss 0.5000 acc 25.00% 100 img/s ETA 3s\n"
            "epoch 1/2 3/4 loss 0.4000 acc 50.00% 25.0 img/s ETA 4s\n"
            "epoch 1/2 4/4 loss 0.3000 acc 75.00% 25.0 img/s in 16s\n");
  std::fclose(f);
}

TEST(Progress, TerminalModeRedrawsOneLine) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  double now = 0;
  ProgressReporter p(f, {.label = "epoch 1/2", .total_steps = 4, .clock = [&] { return now; }},
                     /*tty=*/true);
  now = 1;
  p.update(1, 100, 0.5, 0.25);
  now = 1.05;
  p.update(2, 200, 0.5, 0.25);  // within 0.1 s: not redrawn
  now = 2;
  p.finish();  // draws the final state, then a newline
  EXPECT_EQ(contents(f),
            "\repoch 1/2 [######..................] 1/4 loss 0.5000 acc 25.00% 100 img/s ETA 3s"
            "\033[K"
            "\repoch 1/2 [############............] 2/4 loss 0.5000 acc 25.00% 100 img/s ETA 2s"
            "\033[K\n");
  std::fclose(f);
  expect_error([] { ProgressReporter(stderr, {.total_steps = 0}, false); },
               {"total steps must be positive"});
  expect_error([] { ProgressReporter(stderr, {.total_steps = 4, .first_step = 5}, false); },
               {"first step must be in [0, 4], got 5"});
}

// An epoch resumed at step 60 of 100: 10 steps in 5 s leave 30 steps, 15 s.
// (Extrapolating from all 70 steps would say 2s.)
TEST(Progress, ResumedEpochExtrapolatesFromTheStepsItTimed) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  double now = 0;
  ProgressReporter p(f, {.label = "epoch 2/3", .total_steps = 100, .first_step = 60, .clock = [&] {
                           return now;
                         }});
  now = 5;
  p.update(70, 1000, 0.25, 0.5);
  p.finish();
  EXPECT_EQ(contents(f), "epoch 2/3 70/100 loss 0.2500 acc 50.00% 200 img/s ETA 15s\n");
  std::fclose(f);
}

}  // namespace
}  // namespace tenet::train
