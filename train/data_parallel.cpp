// Data-parallel steps with bits independent of the number of processes
// (data_parallel.h).
#include "train/data_parallel.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "support/error.h"

namespace tenet::train {

DataParallel::DataParallel(Team& team, ParameterStore& params, int64_t shards,
                           const std::string& shards_option)
    : team_(team), params_(params), shards_(shards) {
  const int64_t ranks = team.size();
  if (shards < 1 || shards % ranks != 0)
    throw TeamError(shards_option + " " + std::to_string(shards) + " cannot be shared by " +
                    std::to_string(ranks) + " processes: give a multiple of " +
                    std::to_string(ranks) + " (every process takes as many shards)");
}

std::pair<int64_t, int64_t> DataParallel::shard_rows(int64_t n, int64_t shards, int64_t s) {
  const int64_t first = n * s / shards, end = n * (s + 1) / shards;
  return {first, end - first};
}

void DataParallel::plan(int64_t n) {
  if (n < shards_)
    throw TeamError("a batch of " + std::to_string(n) + " examples cannot be cut into " +
                    std::to_string(shards_) + " shards: every shard needs an example");
  if (planned_n_ >= 0) return;
  planned_n_ = n;
  const int64_t ranks = team_.size(), local = shards_ / ranks;
  const int64_t p = params_.flat_gradient().numel();
  slice_offset_.assign(size_t(ranks), 0);
  slice_count_.assign(size_t(ranks), 0);
  send_counts_.assign(size_t(ranks), 0);
  send_offsets_.assign(size_t(ranks), 0);
  recv_counts_.assign(size_t(ranks), 0);
  recv_offsets_.assign(size_t(ranks), 0);
  for (int64_t q = 0; q < ranks; ++q) {
    slice_offset_[size_t(q)] = p * q / ranks;
    slice_count_[size_t(q)] = p * (q + 1) / ranks - slice_offset_[size_t(q)];
  }
  const int64_t mine = slice_count_[size_t(team_.rank())];
  for (int64_t q = 0; q < ranks; ++q) {
    send_counts_[size_t(q)] = local * slice_count_[size_t(q)];
    send_offsets_[size_t(q)] = local * slice_offset_[size_t(q)];
    recv_counts_[size_t(q)] = local * mine;
    recv_offsets_[size_t(q)] = q * local * mine;
  }
  send_.assign(size_t(local * p), 0.0f);
  if (ranks > 1) recv_.assign(size_t(shards_ * mine), 0.0f);
  sum_.assign(size_t(mine), 0.0);
  outcomes_.assign(size_t(2 * shards_), 0.0f);
  outcome_counts_.assign(size_t(ranks), 2 * local);
  outcome_offsets_.assign(size_t(ranks), 0);
  for (int64_t q = 0; q < ranks; ++q) outcome_offsets_[size_t(q)] = 2 * local * q;
}

ShardOutcome DataParallel::step(int64_t n, const ShardStep& shard_step) {
  if (shards_ == 1 && team_.size() == 1) return shard_step(0, 0, n);
  plan(n);
  const int64_t ranks = team_.size(), rank = team_.rank(), local = shards_ / ranks;
  float* grad = params_.flat_gradient().data<float>();
  for (int64_t j = 0; j < local; ++j) {
    const int64_t s = rank * local + j;
    const auto [first, rows] = shard_rows(n, shards_, s);
    const ShardOutcome o = shard_step(s, first, rows);
    outcomes_[size_t(2 * s)] = float(o.loss);  // a float32 output of the model
    outcomes_[size_t(2 * s + 1)] = float(o.correct);
    for (int64_t q = 0; q < ranks; ++q)
      std::memcpy(send_.data() + send_offsets_[size_t(q)] + j * slice_count_[size_t(q)],
                  grad + slice_offset_[size_t(q)], size_t(slice_count_[size_t(q)]) * sizeof(float));
  }
  const float* parts = send_.data();  // alone: every shard's whole gradient, in order
  if (ranks > 1) {
    team_.exchange(send_.data(), send_counts_, send_offsets_, recv_.data(), recv_counts_,
                   recv_offsets_);
    parts = recv_.data();
  }
  // Σ_s n_s · g_s in shard order; each product is exact in float64.
  const int64_t mine = slice_count_[size_t(rank)];
  double* sum = sum_.data();
  std::fill(sum_.begin(), sum_.end(), 0.0);
  for (int64_t s = 0; s < shards_; ++s) {
    const double weight = double(shard_rows(n, shards_, s).second);
    const float* part = parts + s * mine;
    for (int64_t i = 0; i < mine; ++i) sum[i] += weight * double(part[i]);
  }
  float* out = grad + slice_offset_[size_t(rank)];
  for (int64_t i = 0; i < mine; ++i) out[i] = float(sum[i] / double(n));
  team_.gather_parts(grad, slice_count_, slice_offset_);
  team_.gather_parts(outcomes_.data(), outcome_counts_, outcome_offsets_);
  ShardOutcome batch;
  double loss = 0;
  for (int64_t s = 0; s < shards_; ++s) {
    loss += double(shard_rows(n, shards_, s).second) * double(outcomes_[size_t(2 * s)]);
    batch.correct += int64_t(outcomes_[size_t(2 * s + 1)]);
  }
  batch.loss = loss / double(n);
  return batch;
}

void copy_rows(const Tensor& from, int64_t first, int64_t count, Tensor& into) {
  std::vector<int64_t> shape = from.shape();
  const int64_t row = shape.at(0) > 0 ? from.numel() / shape[0] : 0;
  shape[0] = count;
  if (into.shape() != shape || into.type() != from.type()) into = Tensor(from.type(), shape);
  const size_t element = byte_size(from.type());
  std::memcpy(into.raw(), static_cast<const char*>(from.raw()) + size_t(first * row) * element,
              size_t(count * row) * element);
}

}  // namespace tenet::train
