/// \file
/// The training loop behind `tenet train` and Python's tenet.train: epochs of shuffled, augmented
/// batches, an optimiser step per batch, a test-set evaluation per epoch, a
/// CSV log of the curve, and checkpoints a killed run resumes from.
///
/// Run directory (RunOptions::run_dir):
///   last.safetensors  the latest checkpoint: parameters, optimiser state,
///                     step, epoch, and in its metadata the hyper-parameters,
///                     the model's path and fingerprint, and the partial sums
///                     of the running metrics
///   log.csv           epoch,step,split,loss,accuracy,lr,images_per_second,elapsed_seconds
///                     one "train" row every log_every steps (means over those
///                     steps) and one "test" row per epoch
///   model.tn          a copy of the model source the run started from
///
/// Guarantees: checkpoints are written atomically every checkpoint_every
/// steps and at the end of each epoch (after its evaluation); a resumed run
/// continues from the checkpoint's step with the same batches, shifts and
/// dropout masks (all derived from seed, epoch and batch index) and the same
/// optimiser state, so its parameters equal an uninterrupted run's bit for
/// bit, and its log equals the uninterrupted log but for timings.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "train/mnist.h"
#include "train/options.h"
#include "train/trainable_model.h"

namespace tenet::train {

/// Where a run reads and writes, and how often. The defaults are the CLI's
/// and Python's.
struct RunOptions {
  std::string data_dir;
  std::string run_dir;
  std::string resume;              // a checkpoint file to continue from, or ""
  int64_t checkpoint_every = 100;  // steps; 0: only at the end of each epoch
  int64_t log_every = 20;          // steps per "train" log row (> 0)
  /// How messages name an option ("lr", "out") to the user: the CLI's
  /// "--lr", Python's keyword as it is.
  std::function<std::string(const std::string&)> spell = [](const std::string& o) { return o; };
};

/// The MNIST folder a run reads unless told otherwise: $TENET_DATA_DIR, else
/// the bundled sample (data/mnist-sample).
std::string default_data_dir();
/// "runs/<model name>": the run directory unless told otherwise.
std::string default_run_dir(const std::string& model_path);
/// The files a run writes in its directory.
const std::vector<std::string>& run_files();

/// What a run directory already holds that the run would overwrite.
struct RunDirConflict {
  /// "" when nothing; "RUNDIR already holds a run (last.safetensors)";
  /// "RUNDIR already holds log.csv and model.tn, which the run would overwrite".
  std::string message;
  bool holds_a_run = false;  // a checkpoint: the run could be resumed
};
/// A resumed run continuing in its checkpoint's own folder overwrites nothing
/// of another's.
RunDirConflict run_dir_conflict(const RunOptions& options);

/// Where a run tells its story. The CLI prints it; Python prints it or stays
/// quiet. Lines have no trailing newline.
class TrainingReporter {
 public:
  virtual ~TrainingReporter() = default;
  /// The setup, each epoch's test result, checkpoints, the end.
  virtual void line(const std::string& text) = 0;
  virtual void warning(const std::string& text) = 0;
  /// Progress within an epoch: `label` ("epoch 2/5") of `total_steps`,
  /// starting after `first_step` (a resumed epoch); then each step; then the end.
  virtual void epoch_begins(const std::string& label, int64_t total_steps, int64_t first_step) {}
  virtual void step_done(int64_t step, int64_t images, double loss, double accuracy) {}
  virtual void epoch_ends() {}
};

/// What a finished run reached.
struct TrainingResult {
  int64_t steps = 0;
  int64_t epochs = 0;
  double test_loss = 0;  // the last epoch's evaluation
  double test_accuracy = 0;
  std::string checkpoint;  // RUNDIR/last.safetensors
};

/// Mean loss and accuracy of a model's evaluation function over a dataset,
/// in batches of `batch` (the last one may be smaller).
struct DatasetEvaluation {
  double loss = 0;
  int64_t correct = 0;
  int64_t total = 0;
  double seconds = 0;
  double accuracy() const { return total > 0 ? double(correct) / double(total) : 0.0; }
};
DatasetEvaluation evaluate_dataset(TrainableModel& model, const MnistDataset& data, int64_t batch);

/// Trains `model` on `train_data` (parameters initialised here, or loaded
/// from options.resume), evaluating on `test_data` after each epoch. Progress
/// goes to `reporter`; check_interrupt() (support/child_processes.h) runs
/// before each step. A BindError when the loss stops being finite (the step
/// is not taken, the last checkpoint stays) or the parameters diverge.
/// As one of the processes an MPI launcher started (train/team.h), every
/// rank calls it with the same arguments: they share each batch
/// (data_parallel.h: `hyper.shards` parts, 0 for one per process), rank 0
/// alone reports to `reporter`, writes the run directory and evaluates;
/// failures every rank sees alike are TeamErrors.
TrainingResult run_training(TrainableModel& model, const HyperParams& hyper,
                            const RunOptions& options, const MnistDataset& train_data,
                            const MnistDataset& test_data, TrainingReporter& reporter);

}  // namespace tenet::train
