// Checkpoints: what `tenet train` saves, `tenet eval` and `tenet predict`
// load and reproduce exactly; a plain safetensors file of the weights (as
// PyTorch would write it) loads the same way; a run killed with SIGKILL
// resumes from its last checkpoint and ends with the parameters of an
// uninterrupted run, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <regex>
#include <sstream>

#include "tests/training/training_util.h"
#include "train/safetensors.h"

namespace tenet::testing {
namespace {

const char* kMlpRun =
    "train models/mlp.tn --epochs 1 --batch 50 --limit-train 500 --limit-test 300 ";

struct EvalLine {
  int64_t correct = -1, total = -1;
  double loss = NAN;
};

/// "test accuracy 87.70% (877/1000), loss 0.394858769 [...]"
EvalLine parse_eval(const std::string& out) {
  std::smatch m;
  EvalLine e;
  if (std::regex_search(out, m, std::regex(R"(\((\d+)/(\d+)\), loss ([-0-9.e+]+))"))) {
    e.correct = std::stoll(m[1]);
    e.total = std::stoll(m[2]);
    e.loss = std::stod(m[3]);
  }
  return e;
}

TEST_F(Training, EvalAndPredictReproduceTheTrainingRun) {
  CommandResult r = tenet(std::string(kMlpRun) + "--out " + path("run"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  LogRow test_row = read_log(path("run/log.csv")).back();
  ASSERT_EQ(test_row.split, "test");

  // The checkpoint, loaded by eval, gives the evaluation the run logged (in
  // batches of the same size: the loss is a mean of float32 batch means).
  CommandResult e = tenet("eval models/mlp.tn --limit 300 --batch 50 --checkpoint " + path("run"));
  ASSERT_EQ(e.exit_code, 0) << e.out << e.err;
  EvalLine line = parse_eval(e.out);
  EXPECT_EQ(line.total, 300) << e.out;
  EXPECT_EQ(double(line.correct) / 300.0, test_row.accuracy) << e.out;
  EXPECT_NEAR(line.loss, test_row.loss, 1e-8 * std::fabs(test_row.loss)) << e.out;

  // Prediction agrees with the evaluation's count of correct answers.
  CommandResult p =
      tenet("predict models/mlp.tn --limit 300 --checkpoint " + path("run/last.safetensors"));
  ASSERT_EQ(p.exit_code, 0) << p.out << p.err;
  EXPECT_NE(p.out.find(std::to_string(line.correct) + " of 300 predictions match the labels"),
            std::string::npos)
      << p.out;
}

// The parameters alone, without Tenet's metadata or optimiser state, as
// safetensors.torch.save_file would write them: eval gives the same answer.
TEST_F(Training, EvalReadsAPlainWeightsFile) {
  CommandResult r = tenet(std::string(kMlpRun) + "--out " + path("run"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  train::write_safetensors(path("weights.safetensors"),
                           checkpoint_parameters(path("run/last.safetensors")));
  CommandResult a = tenet("eval models/mlp.tn --limit 300 --checkpoint " + path("run"));
  CommandResult b =
      tenet("eval models/mlp.tn --limit 300 --checkpoint " + path("weights.safetensors"));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(parse_eval(a.out).correct, parse_eval(b.out).correct);
  EXPECT_EQ(parse_eval(a.out).loss, parse_eval(b.out).loss);
}

// Kill a run right after a mid-epoch checkpoint, resume it, and compare with
// an uninterrupted run of the same seed: the parameters and the optimiser
// state are identical, and so is the log but for its timings. The model is
// the CNN, whose dropout masks and shifted batches must be redrawn exactly.
TEST_F(Training, ResumeAfterKillReproducesTheUninterruptedRun) {
  const std::string common =
      "--epochs 2 --batch 20 --limit-train 200 --limit-test 100 --shift 2 --checkpoint-every 3 "
      "--log-every 2 --seed 5";
  CommandResult whole = tenet("train models/mnist_cnn.tn " + common + " --out " + path("whole"));
  ASSERT_EQ(whole.exit_code, 0) << whole.out << whole.err;

  std::vector<std::string> args = {"train", "models/mnist_cnn.tn", "--out", path("killed")};
  std::stringstream ss(common);
  for (std::string w; ss >> w;) args.push_back(w);
  KilledRun killed = run_and_kill_at(args, "checkpoint: step 6 ");
  ASSERT_TRUE(killed.killed) << killed.out;

  CommandResult resumed =
      tenet("train models/mnist_cnn.tn --resume " + path("killed/last.safetensors"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  // It continued from step 6 or later (it may have saved again before the
  // kill landed), not from the beginning, and not from the end.
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(resumed.out, m, std::regex(R"(resuming from .*: epoch \d+, step (\d+))")))
      << resumed.out;
  EXPECT_GE(std::stoll(m[1]), 6);
  EXPECT_LT(std::stoll(m[1]), 20);

  train::SafetensorsFile a = train::read_safetensors(path("whole/last.safetensors"));
  train::SafetensorsFile b = train::read_safetensors(path("killed/last.safetensors"));
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    SCOPED_TRACE(a.tensors[i].name);
    ASSERT_EQ(a.tensors[i].name, b.tensors[i].name);
    ASSERT_EQ(a.tensors[i].tensor.shape(), b.tensors[i].tensor.shape());
    EXPECT_EQ(0, std::memcmp(a.tensors[i].tensor.raw(), b.tensors[i].tensor.raw(),
                             a.tensors[i].tensor.nbytes()));
  }
  std::vector<LogRow> log_a = read_log(path("whole/log.csv"));
  std::vector<LogRow> log_b = read_log(path("killed/log.csv"));
  ASSERT_EQ(log_a.size(), log_b.size());
  for (size_t i = 0; i < log_a.size(); ++i) EXPECT_EQ(log_a[i].line, log_b[i].line);
}

}  // namespace
}  // namespace tenet::testing
