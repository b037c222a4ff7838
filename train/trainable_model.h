/// \file
/// A model ready to train: a .tn file's checked program, its trainer
/// directives (model_spec.h), its parameters, and two compiled programs: the
/// gradient of the training loss with respect to every parameter
/// and the evaluation function, compiled by one driver request
/// (driver/README.md, "The trainer's request") into one cached library.
///
/// Expects: a model file whose directives parse (parse_model_spec).
/// Guarantees: train_step() leaves each parameter's gradient in
/// Parameter::grad; dropout masks are pure functions of the key passed in
/// (Bernoulli(1 - p) / (1 - p) per element), and evaluation sees masks of
/// ones; nothing depends on the thread count (compiled gradients are
/// deterministic), so equal keys and parameters give bit-identical steps.
/// Each program is bound once per batch size (jit::Executable), and the
/// gradients are written straight into the parameters' grad tensors, so a
/// step allocates nothing after the first one of its batch size.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "driver/driver.h"
#include "jit/executable.h"
#include "jit/jit.h"
#include "support/diagnostics.h"
#include "support/tensor.h"
#include "train/buffer_roles.h"
#include "train/checkpoint.h"
#include "train/model_spec.h"
#include "train/params.h"

namespace tenet::train {

/// The outcome of one batch: its mean loss (as the model defines it) and how
/// many examples the scores classified correctly.
struct BatchResult {
  double loss = 0;
  int64_t correct = 0;
  int64_t size = 0;
};

/// The driver request for a model's two programs: the gradient of the
/// training loss with respect to every parameter, and the evaluation function
/// (what TrainableModel compiles and `tenet emit --train` emits).
driver::Request training_request(const std::string& path, const ModelSpec& spec);

class TrainableModel {
 public:
  /// Loads and checks `path` and its directives (CompileError for either);
  /// the programs are compiled on first use. `verbose` prints the JIT's
  /// cache hits and compiler commands. `target`: the code target the
  /// programs are compiled for (driver/target.h: cpp; cuda, cuda-emulated:
  /// docs/cuda.md), their parameters and data in host memory whatever it is.
  TrainableModel(const std::string& path, bool verbose,
                 const std::string& target = driver::kDefaultTarget);

  const std::string& path() const { return path_; }
  /// The code target (driver/target.h) the programs are compiled for.
  const std::string& target() const { return target_; }
  const ModelSpec& spec() const { return spec_; }
  /// The checker's warnings and notes about the file, rendered ("" when none).
  std::string warnings() const { return front_.render_warnings(); }
  /// A hash of the file's text (hex): checkpoints record it.
  const std::string& fingerprint() const { return fingerprint_; }
  ParameterStore& params() { return params_; }
  const ParameterStore& params() const { return params_; }

  /// Loads a checkpoint of `tenet train` into the parameters and, when given,
  /// the optimiser. A BindError on any mismatch; when the checkpoint names
  /// another model file, the message says which.
  CheckpointState load_checkpoint(const std::string& path, Optimizer* optimizer);
  /// Loads trained parameters from a checkpoint (its optimiser state is
  /// ignored) or from a plain safetensors file holding every parameter by
  /// name with its shape or the same number of elements (as
  /// safetensors.torch.save_file writes them, e.g. [256, 784] for [256, 28, 28]).
  void load_weights(const std::string& path);

  /// Compiles the gradient and evaluation programs (JIT, cached), unless done
  /// already; train_step() and evaluate() call it on first use.
  void compile();
  /// Whether compile() has run.
  bool compiled() const { return !compiled_.empty(); }

  /// Forward and backward through the training function on one batch
  /// (images float32 [B, 1, 28, 28], labels int32 [B]); the gradients land in
  /// the parameters' grad tensors. `dropout_key` seeds the masks.
  /// `first_row`: where these rows start in the batch whose masks `dropout_key`
  /// draws (a shard of it: data_parallel.h), so they get those rows of the masks.
  BatchResult train_step(const Tensor& images, const Tensor& labels, uint64_t dropout_key,
                         int64_t first_row = 0);

  /// The evaluation function on one batch: its class scores [B, 10] and, when
  /// the model names a loss for it, the loss (else 0). Labels may be empty
  /// when the evaluation function takes none.
  struct Evaluation {
    Tensor scores;
    double loss = 0;
  };
  Evaluation evaluate(const Tensor& images, const Tensor& labels);
  /// Whether evaluate() reports a loss.
  bool eval_has_loss() const { return !spec_.eval.loss.empty(); }

 private:
  /// A program bound to one batch size, with its input and output tensors,
  /// bound by their roles (as a standalone project binds them): parameters
  /// and gradients alias the store's buffers; images and labels are set per
  /// call, masks refilled per step.
  struct Bound {
    jit::Executable executable;
    ProgramRoles roles;  // what each buffer is (buffer_roles.h)
    std::vector<Tensor> inputs, outputs;
    Tensor no_labels;  // zeros, for prediction without labels
  };
  Bound& bound(size_t program, int64_t batch);
  /// Sets the data inputs of `b` (and refills its masks when training).
  void set_batch(Bound& b, const Tensor& images, const Tensor& labels, bool training,
                 uint64_t dropout_key, int64_t first_row);
  /// The row of a mask these rows start at: `first_row`, or 0 when the mask
  /// does not depend on the batch. A BindError when the batch is not its
  /// first dimension.
  int64_t mask_first_row(const ir::Value& input, int64_t first_row) const;
  size_t output_index(const ir::Function& fn, const std::string& name) const;

  std::string path_;
  bool verbose_;
  std::string fingerprint_;
  driver::Compilation front_;  // parsed and checked; compile() continues from it
  std::shared_ptr<const SourceFile> file_;
  ModelSpec spec_;
  ParameterStore params_;
  std::vector<jit::CompiledFunction> compiled_;  // kGradient, kEvaluation
  std::string target_;
  std::map<std::pair<size_t, int64_t>, Bound> bound_;  // by (program, batch size)
};

}  // namespace tenet::train
