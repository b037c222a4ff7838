/// \file
/// Training checkpoints: one safetensors file (train/safetensors.h) holding
/// the parameters, the optimiser state, the progress counters, the RNG state
/// and free-form metadata, so PyTorch can read the weights directly
/// (safetensors.torch.load_file(path)["conv1_w"]).
///
/// Tensor names in the file:
///   <param>                      each parameter's value (float32)
///   optimizer/step               the optimiser's step count (int64 scalar)
///   optimizer/<param>/<buffer>   its buffers (train/optimizer.h)
///   train/step, train/epoch      int64 scalars (CheckpointState)
///   train/rng                    int64 [6]: an Rng::Snapshot
/// Metadata: the caller's map plus "tenet.format" = "tenet-checkpoint-1" and
/// "tenet.optimizer" = the optimiser's kind() (absent without one).
///
/// Guarantees: saving is atomic (a crash leaves the previous checkpoint);
/// loading changes nothing unless the whole file matches the store and the
/// optimiser: every parameter present with its shape and float32, the same
/// optimiser kind, no unknown tensors. Every mismatch is a BindError naming
/// the file and the tensor.
/// Neither writes nor accepts a state no training run can continue from (a
/// diverged one): a parameter or optimiser buffer that is NaN or infinite, a
/// negative running average of squares, a negative or out-of-range step or
/// epoch (Optimizer::state_problem). Saving such a
/// state is a BindError that leaves the previous file in place.
#pragma once

#include <cstdint>
#include <string>

#include "train/optimizer.h"
#include "train/params.h"
#include "train/rng.h"
#include "train/safetensors.h"

namespace tenet::train {

struct CheckpointState {
  int64_t step = 0;   // optimiser steps taken
  int64_t epoch = 0;  // the epoch to continue with (or the one in progress)
  Rng::Snapshot rng{};
  /// Free-form strings: model file hash, hyper-parameters, command line...
  /// Keys starting with "tenet." are reserved (a BindError on save).
  Metadata metadata{};
};

/// The first value of the parameters or the optimiser's state that a
/// checkpoint must not hold, e.g. "parameter 'w' holds nan at [0, 3]"; empty
/// when there is none. A training loop checks it to stop at divergence.
std::string invalid_state(const ParameterStore& params, const Optimizer* optimizer);

/// Saves parameters, optimiser state (when `optimizer` is not null) and state.
void save_checkpoint(const std::string& path, const ParameterStore& params,
                     const Optimizer* optimizer, const CheckpointState& state);

/// Loads a checkpoint into `params` and `optimizer`, returning the rest. With
/// a null optimiser, optimiser state in the file is ignored (evaluation); with
/// one, the file must hold state for an optimiser of the same kind.
CheckpointState load_checkpoint(const std::string& path, ParameterStore& params,
                                Optimizer* optimizer);

/// Copies every parameter from `file` (read from `path`), a plain
/// safetensors file holding each parameter by name with its shape or the
/// same number of elements (as safetensors.torch.save_file writes them, e.g.
/// [256, 784] for [256, 28, 28]), and nothing else. A BindError names the
/// file, the tensor and `model` (what the parameters belong to) on any
/// mismatch; nothing changes then.
void load_weights(const SafetensorsFile& file, const std::string& path, ParameterStore& params,
                  const std::string& model);
/// Writes the parameters alone, by name, with metadata {"format": "pt"} (as
/// safetensors.torch.save_file does), atomically.
void save_weights(const std::string& path, const ParameterStore& params);

}  // namespace tenet::train
