/// \file
/// The random numbers of the training runtime: a small, portable generator
/// (xoshiro256**, seeded through splitmix64) and hashing of seeds with names
/// and counters, so that every random choice is a pure function of a seed and
/// what it is for (a parameter's name, an epoch, an image index).
///
/// Guarantees: identical sequences on every platform and standard library (no
/// std::*_distribution); the state is four 64-bit words that a checkpoint can
/// save and restore exactly.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace tenet::train {

/// splitmix64's finaliser: a bijective mix of 64 bits.
uint64_t mix64(uint64_t x);

/// A 64-bit key for a seed and a name (FNV-1a of the name, mixed with the seed).
uint64_t hash_key(uint64_t seed, std::string_view name);

/// A 64-bit key for a key and an integer (an epoch, a step, an index).
uint64_t hash_key(uint64_t key, uint64_t value);

class Rng {
 public:
  using State = std::array<uint64_t, 4>;

  /// Seeded from one 64-bit key (expanded with splitmix64; never all zero).
  explicit Rng(uint64_t key = 0);

  /// 64 uniformly random bits.
  uint64_t next_u64();
  /// Uniform in [0, 1), 53 random bits.
  double uniform();
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Standard normal (Box-Muller; the second value of each pair is kept for the next call).
  double normal();
  /// Uniform integer in [0, n), n > 0, without modulo bias.
  uint64_t below(uint64_t n);

  /// The full state, including a cached normal value, for checkpoints.
  struct Snapshot {
    State words{};
    bool has_spare = false;
    double spare = 0;
  };
  Snapshot snapshot() const;
  void restore(const Snapshot& s);

 private:
  State s_{};
  bool has_spare_ = false;
  double spare_ = 0;
};

}  // namespace tenet::train
