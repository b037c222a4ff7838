// Short training runs on the bundled MNIST sample learn: the training loss
// falls and the accuracy rises well above chance (10%), for the MLP
// (models/mlp.tn), the embedding bag (models/embedding_bag.tn) and a reduced
// CapsNet (tests/training/data/capsnet_tiny.tn).
// The thresholds sit far from the measured values (noted per test), so they
// catch a trainer or a gradient that does not learn, not rounding changes.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/training/training_util.h"

namespace tenet::testing {
namespace {

/// A run's first and last "train" rows (means over --log-every steps), and
/// its last test row.
struct Curve {
  LogRow first_train, last_train, last_test;
};

Curve curve_of(const std::vector<LogRow>& rows) {
  Curve c;
  bool seen_train = false;
  for (const LogRow& r : rows) {
    if (r.split == "train") {
      if (!seen_train) c.first_train = r;
      seen_train = true;
      c.last_train = r;
    } else {
      c.last_test = r;
    }
  }
  EXPECT_TRUE(seen_train);
  EXPECT_EQ(c.last_test.split, "test");
  return c;
}

// Measured (seed 1): the first 5 steps' mean loss 2.19 and accuracy 38%, the
// last 5 steps' 0.63 and 82%; test accuracy 79% after 2 epochs of 1000 images.
TEST_F(Training, MlpLearns) {
  CommandResult r = tenet(
      "train models/mlp.tn --epochs 2 --batch 50 --limit-train 1000 "
      "--limit-test 500 --log-every 5 --out " +
      path("run"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("fc1_w [256,28,28] kaiming_uniform(fan_in=784, gain=0.577350269)"),
            std::string::npos)
      << r.out;
  Curve c = curve_of(read_log(path("run/log.csv")));
  EXPECT_LT(c.last_train.loss, 0.5 * c.first_train.loss);
  EXPECT_GT(c.last_train.accuracy, c.first_train.accuracy + 0.2);
  EXPECT_GT(c.last_test.accuracy, 0.7);
  EXPECT_EQ(c.last_test.epoch, 2);
  EXPECT_EQ(c.last_test.step, 40);
}

// The embedding-bag classifier (data-dependent reads, a scatter-add
// gradient). Measured (seed 1): the first 5 steps' mean loss 2.33 and
// accuracy 15%, the last 5 steps' 0.82 and 76%; test accuracy 68% after 2
// epochs of 1000 images.
TEST_F(Training, EmbeddingBagLearns) {
  CommandResult r = tenet(
      "train models/embedding_bag.tn --epochs 2 --batch 50 --limit-train 1000 "
      "--limit-test 500 --log-every 5 --out " +
      path("run"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Curve c = curve_of(read_log(path("run/log.csv")));
  EXPECT_LT(c.last_train.loss, 0.6 * c.first_train.loss);
  EXPECT_GT(c.last_train.accuracy, c.first_train.accuracy + 0.3);
  EXPECT_GT(c.last_test.accuracy, 0.5);
}

// Measured (seed 1): the first 5 steps' mean loss 0.76 and accuracy 7%, the
// last 5 steps' 0.30 and 76%; test accuracy 68% after one epoch of 600 images.
TEST_F(Training, ReducedCapsNetLearns) {
  CommandResult r = tenet(
      "train tests/training/data/capsnet_tiny.tn --limit-train 600 "
      "--limit-test 300 --log-every 5 --out " +
      path("run"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  Curve c = curve_of(read_log(path("run/log.csv")));
  EXPECT_LT(c.last_train.loss, 0.7 * c.first_train.loss);
  EXPECT_GT(c.last_train.accuracy, c.first_train.accuracy + 0.2);
  EXPECT_GT(c.last_test.accuracy, 0.5);
}

// The MNIST example's optimiser and schedule: Adadelta with StepLR-style
// decay (--lr-decay-staircase). Each logged step used lr 1 x 0.5^floor((step
// - 1) / 4), and the MLP learns with it. Measured (seed 1): first 2 steps'
// loss 2.0, last 2 steps' 0.5.
TEST_F(Training, AdadeltaWithAStaircaseSchedule) {
  CommandResult r = tenet(
      "train models/mlp.tn --optimizer adadelta --lr 1 --lr-decay 0.5 --lr-decay-every 4 "
      "--lr-decay-staircase --epochs 1 --batch 50 --limit-train 1000 --limit-test 200 "
      "--log-every 2 --out " +
      path("run"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("optimizer adadelta(lr=1, rho=0.9, eps=1e-06, weight_decay=0), lr "
                       "exponential_decay(lr=1, rate=0.5, every=4, staircase)"),
            std::string::npos)
      << r.out;
  std::vector<LogRow> rows = read_log(path("run/log.csv"));
  int trains = 0;
  for (const LogRow& row : rows) {
    if (row.split != "train") continue;
    ++trains;
    EXPECT_DOUBLE_EQ(row.lr, std::pow(0.5, double((row.step - 1) / 4))) << row.line;
  }
  EXPECT_EQ(trains, 10);
  Curve c = curve_of(rows);
  EXPECT_LT(c.last_train.loss, 0.6 * c.first_train.loss);
  EXPECT_GT(c.last_test.accuracy, 0.6);
}

}  // namespace
}  // namespace tenet::testing
