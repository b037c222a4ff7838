/// \file
/// The training loop behind `tenet train`: epochs of shuffled, augmented
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
#include <map>
#include <string>

#include "tools/train_model.h"
#include "train/mnist.h"

namespace tenet::cli {

/// Hyper-parameters: what decides the parameters a run produces. A resumed
/// run takes them from its checkpoint.
struct HyperParams {
  std::string optimizer;  // "adam", "sgd" or "adadelta"
  double lr = 0;
  double momentum = 0;
  bool nesterov = false;
  double weight_decay = 0;
  double lr_decay = 1;
  int64_t lr_decay_every = 1;
  bool lr_decay_staircase = false;  // lr x lr_decay^floor(step / lr_decay_every)
  int64_t batch = 0;
  int64_t epochs = 0;
  int64_t shift = 0;
  uint64_t seed = 0;
  int64_t limit_train = 0;  // 0: every training image
  int64_t limit_test = 0;   // 0: every test image

  /// key=value text of every field (checkpoint metadata, keys as in @defaults).
  std::map<std::string, std::string> to_map() const;
  /// The same fields back; a BindError naming `source` when one is missing or bad.
  static HyperParams from_map(const std::map<std::string, std::string>& values,
                              const std::string& source);
};

struct RunOptions {
  std::string data_dir;
  std::string run_dir;
  std::string resume;            // a checkpoint file to continue from, or ""
  int64_t checkpoint_every = 0;  // steps; 0: only at the end of each epoch
  int64_t log_every = 0;         // steps per "train" log row (> 0)
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
DatasetEvaluation evaluate_dataset(TrainableModel& model, const train::MnistDataset& data,
                                   int64_t batch);

/// Trains `model` on `train_data` (parameters initialised here, or loaded
/// from options.resume), evaluating on `test_data` after each epoch, and
/// returns the exit status. Progress goes to stdout.
int run_training(TrainableModel& model, const HyperParams& hyper, const RunOptions& options,
                 const train::MnistDataset& train_data, const train::MnistDataset& test_data);

}  // namespace tenet::cli
