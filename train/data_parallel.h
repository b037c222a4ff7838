/// \file
/// Data-parallel training steps whose bits do not depend on how many
/// processes take them. A batch of n rows is cut into `shards` fixed parts
/// (shard s: rows [s·n/S, (s+1)·n/S)); each rank of the team (team.h) takes
/// S/N consecutive shards; each shard's gradient is the model's mean
/// gradient over its rows, with the rows of the batch's dropout masks
/// (init.h: fill_dropout_mask's skip). The batch's gradient is defined as
///
///     g = (Σ_s n_s · g_s) / n,   summed in shard order in float64, rounded once,
///
/// and its loss the same way. Every product n_s · g_s is exact in float64,
/// so the sum is the same with or without fused multiply-adds, and every
/// rank computes it from the same values in the same order: S shards give
/// the same bits on 1, 2, ... S processes (any N dividing S), and one
/// process with `shards` 1 takes exactly the step it takes without this
/// file. How: the gradient region (ParameterStore::flat_gradient) is cut
/// into N slices; an all-to-all gives rank r slice r of every shard's
/// gradient, it sums them in shard order, and an all-gather puts every
/// combined slice back into every rank's gradient region, in place.
/// Communication per rank and step: about 2 · (S/N) · P floats for P
/// parameters (with S = N, what a ring all-reduce moves).
///
/// Expects: the parameters' gradients packed (ParameterStore::pack_gradients),
/// every rank calling step() with the same n.
/// Guarantees: step() allocates nothing after the first call with a batch
/// size; a shard never has zero rows (a BindError when n < S).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "support/tensor.h"
#include "train/params.h"
#include "train/team.h"

namespace tenet::train {

/// One shard's (or the batch's) loss and count of correct predictions.
struct ShardOutcome {
  double loss = 0;
  int64_t correct = 0;
};

class DataParallel {
 public:
  /// A BindError unless `shards` is a positive multiple of the team's size
  /// (named by `shards_option`, as the caller's user writes it).
  DataParallel(Team& team, ParameterStore& params, int64_t shards,
               const std::string& shards_option = "--shards");

  int64_t shards() const { return shards_; }
  /// The first row and the number of rows of shard `s` of a batch of `n`.
  static std::pair<int64_t, int64_t> shard_rows(int64_t n, int64_t shards, int64_t s);

  /// Computes one shard: its mean gradient into the parameters' gradients,
  /// its mean loss and correct count returned.
  using ShardStep = std::function<ShardOutcome(int64_t shard, int64_t first_row, int64_t rows)>;
  /// This rank's shards of a batch of `n` rows, then the combination above:
  /// every rank's gradients hold the batch's gradient, and every rank
  /// returns the batch's loss and correct count.
  ShardOutcome step(int64_t n, const ShardStep& shard_step);

 private:
  void plan(int64_t n);

  Team& team_;
  ParameterStore& params_;
  int64_t shards_;
  int64_t planned_n_ = -1;
  // Per rank q: the slice of the gradient region it combines, and where its
  // parts lie in the send and receive buffers.
  std::vector<int64_t> slice_offset_, slice_count_;
  std::vector<int64_t> send_counts_, send_offsets_, recv_counts_, recv_offsets_;
  std::vector<float> send_, recv_;
  std::vector<double> sum_;
  std::vector<float> outcomes_;  // loss, correct per shard
  std::vector<int64_t> outcome_counts_, outcome_offsets_;
};

/// Rows [first, first + count) of `from` (its first dimension) into `into`,
/// reshaped only when its shape differs (so equal shards reuse it).
void copy_rows(const Tensor& from, int64_t first, int64_t count, Tensor& into);

}  // namespace tenet::train
