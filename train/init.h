/// \file
/// Parameter initialisers, chosen explicitly for every parameter: there is no
/// default (PyTorch's silent Kaiming default is a known trap). An InitSpec is
/// parsed from the text a user writes and prints back the same way.
///
/// Accepted text (numbers are decimal or scientific; spaces are free):
///
///   uniform(LOW, HIGH)                 U(LOW, HIGH), LOW < HIGH
///   normal(MEAN, STD)                  N(MEAN, STD^2), STD > 0
///   truncated_normal(MEAN, STD)        N(MEAN, STD^2), values outside
///                                      [MEAN - 2 STD, MEAN + 2 STD] re-drawn
///   kaiming_uniform(fan_in=F[, gain=G])   U(-b, b), b = G * sqrt(3 / F)
///   kaiming_normal(fan_in=F[, gain=G])    N(0, s^2), s = G / sqrt(F)
///       (fan_out=F instead of fan_in=F for PyTorch's mode="fan_out";
///        G defaults to sqrt(2), the gain for ReLU; gain=1 for linear layers)
///   xavier_uniform(fan_in=A, fan_out=B[, gain=G])  U(-b, b), b = G * sqrt(6 / (A + B))
///   xavier_normal(fan_in=A, fan_out=B[, gain=G])   N(0, s^2), s = G * sqrt(2 / (A + B))
///       (G defaults to 1)
///   zeros | ones | constant(VALUE)
///
/// Arguments of uniform/normal/truncated_normal/constant may be positional or
/// named (low=, high=, mean=, std=, value=); fans and gains are always named.
/// The fan is never guessed from the shape: the caller states it (for a
/// convolution weight [O, C, KH, KW], fan_in = C*KH*KW and fan_out = O*KH*KW).
///
/// Guarantees: parse errors are InitError with the text and what is wrong;
/// initialize() is deterministic in (seed, parameter name) only, so the order
/// in which parameters are initialised does not change their values.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.h"
#include "support/tensor.h"

namespace tenet::train {

/// A malformed initialiser text (a user error).
class InitError : public BindError {
 public:
  using BindError::BindError;
};

enum class InitKind {
  Uniform,
  Normal,
  TruncatedNormal,
  KaimingUniform,
  KaimingNormal,
  XavierUniform,
  XavierNormal,
  Zeros,
  Ones,
  Constant,
};

struct InitSpec {
  InitKind kind = InitKind::Zeros;
  double low = 0, high = 0;        // Uniform
  double mean = 0, stddev = 0;     // Normal, TruncatedNormal
  double value = 0;                // Constant
  double fan_in = 0, fan_out = 0;  // Kaiming (one of them, the other 0), Xavier (both)
  double gain = 0;                 // Kaiming, Xavier (the default filled in by parse)

  /// Parses the text above; throws InitError.
  static InitSpec parse(std::string_view text);

  /// The canonical text, which parse() reads back to an equal spec:
  /// "kaiming_uniform(fan_in=81)", "uniform(-0.1, 0.1)". The gain is shown
  /// only when it is not the default.
  std::string to_string() const;

  /// What the values will be drawn from, with the derived numbers:
  /// "bound 0.272" (uniform kinds: values in [-bound, bound] or [low, high]),
  /// "std 0.157" (normal kinds), "= 0.1" (constants).
  std::string derived() const;

  /// The number that characterises the values, after the formulas above: the
  /// bound of a Kaiming/Xavier uniform range, the std of a normal kind, the
  /// value of a constant, max(|low|, |high|) for uniform.
  double scale() const;

  // Written out: standalone projects build this runtime as C++17.
  bool operator==(const InitSpec& o) const {
    return kind == o.kind && low == o.low && high == o.high && mean == o.mean &&
           stddev == o.stddev && value == o.value && fan_in == o.fan_in && fan_out == o.fan_out &&
           gain == o.gain;
  }
  bool operator!=(const InitSpec& o) const { return !(*this == o); }
};

/// Fills a float32 or float64 tensor per the spec, drawing from a generator
/// keyed by hash_key(seed, name) (train/rng.h).
void initialize(Tensor& t, const InitSpec& spec, uint64_t seed, std::string_view name);

/// "conv1_w [256,1,9,9] kaiming_uniform(fan_in=81) -> bound 0.272"
std::string describe_init(std::string_view name, const std::vector<int64_t>& shape,
                          const InitSpec& spec);

/// Fills a float32 `mask` with Bernoulli(1 - p) / (1 - p) values drawn from
/// `key`: a dropout mask. `first_row`: the mask holds rows [first_row,
/// first_row + rows) of a batch's mask whose first dimension is the batch
/// (a shard's: data_parallel.h); the earlier rows' draws are passed over, so
/// they are those rows of the whole batch's mask.
void fill_dropout_mask(Tensor& mask, double p, uint64_t key, int64_t first_row = 0);
/// The key of the dropout masks of batch `batch_index` of `epoch` (both from
/// 0) in a run seeded with `seed`; mask `m` is filled from hash_key(key, m).
uint64_t dropout_key(uint64_t seed, int64_t epoch, int64_t batch_index);

}  // namespace tenet::train
