/// \file
/// A standalone model: the parameters of the table in model_info.h,
/// initialised as `tenet train` initialises them, the generated gradient and
/// evaluation functions, and an optimiser. What the C API (<model>_train.h)
/// wraps.
///
/// Guarantees: the same seed gives the same initial parameters as `tenet
/// train --seed` (train/init.h: a pure function of the seed and the name);
/// dropout masks are pure functions of the key passed to train_step, filled
/// as `tenet train` fills them (fill_dropout_mask with hash_key(key, mask
/// name)); train_step and forward allocate nothing after their first call
/// with a batch size: the workspace, the masks and the outputs are planned
/// once per batch size. Errors are BindErrors with a message for the user.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "standalone/model_info.h"
#include "support/tensor.h"
#include "train/data_parallel.h"
#include "train/optimizer.h"
#include "train/params.h"

namespace tenet::standalone {

class Model {
 public:
  /// Parameters initialised from `seed`; SGD without momentum at lr 0.01
  /// until set_optimizer().
  Model(const ModelInfo& info, uint64_t seed);
  /// The optimiser refers to the parameters: a model stays where it is made.
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelInfo& info() const { return info_; }
  train::ParameterStore& params() { return params_; }

  /// "sgd" (with `momentum`) or "adam" (β₁ 0.9, β₂ 0.999, ε 1e-8), at `lr`:
  /// torch.optim's rules (train/optimizer.h). A new optimiser starts with
  /// empty state. BindError for another kind or a bad value.
  void set_optimizer(const std::string& kind, double lr, double momentum);
  double lr() const { return optimizer_->lr(); }
  void set_lr(double lr) { optimizer_->set_lr(lr); }
  int64_t steps() const { return optimizer_->step_count(); }

  /// Shares each training batch among the processes of the job an MPI
  /// launcher started (train/team.h; alone: this process) in `shards`
  /// parts (train/data_parallel.h; 0: one per process), starting from rank
  /// 0's parameters: the same shards give the same steps on any number of
  /// processes dividing them. Every process calls it, then train_step with
  /// the whole batch. A BindError when the processes cannot share them.
  void set_shards(int64_t shards);

  /// One step: forward and backward on the batch, then the optimiser's
  /// update. Returns the batch's loss (the parameters are not updated when
  /// it is not finite: a BindError then).
  double train_step(const float* images, const int32_t* labels, int64_t batch,
                    uint64_t dropout_key);
  /// The evaluation function's class scores, [batch, classes], into `scores`.
  void forward(const float* images, int64_t batch, float* scores);

  /// Loads parameters from a safetensors file: a plain one (by name, as
  /// save() or safetensors.torch.save_file write) or a `tenet train`
  /// checkpoint. Nothing changes on an error.
  void load(const std::string& path);
  /// Writes the parameters by name (safetensors.torch.load_file reads them).
  void save(const std::string& path) const;

 private:
  /// A program bound to one batch size: its buffers and workspace.
  struct Bound {
    std::vector<void*> buffers;  // inputs, then outputs, as the program takes them
    /// Beside each buffer, the tensor when the model owns it (masks, labels
    /// of evaluation, outputs nobody supplies); empty otherwise.
    std::vector<Tensor> owned;
    std::unique_ptr<char, void (*)(void*)> workspace{nullptr, nullptr};
  };
  Bound& bound(const ProgramInfo& program, int64_t batch);
  /// Forward and backward on `batch` rows: their mean gradient in the
  /// parameters' gradients; returns their loss.
  /// `first_row`: where these rows start in the batch whose masks
  /// `dropout_key` draws.
  double gradient(const float* images, const int32_t* labels, int64_t batch, uint64_t dropout_key,
                  int64_t first_row);
  void run(const ProgramInfo& program, Bound& b, int64_t batch);

  const ModelInfo& info_;
  train::ParameterStore params_;
  std::unique_ptr<train::Optimizer> optimizer_;
  std::unique_ptr<train::DataParallel> parallel_;  // after set_shards
  std::map<std::pair<const ProgramInfo*, int64_t>, Bound> bound_;
};

}  // namespace tenet::standalone
