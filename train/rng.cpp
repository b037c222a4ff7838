#include "train/rng.h"

#include <cmath>

namespace tenet::train {

// C++17 (standalone projects build this file): no std::rotl, std::numbers.
namespace {

constexpr double kPi = 3.14159265358979323846;

uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

}  // namespace

uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t hash_key(uint64_t seed, std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a offset basis
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ULL;  // FNV-1a prime
  }
  return mix64(mix64(seed) ^ h);
}

uint64_t hash_key(uint64_t key, uint64_t value) {
  return mix64(key ^ mix64(value + 0x632be59bd9b4e019ULL));
}

Rng::Rng(uint64_t key) {
  // splitmix64 expansion: consecutive outputs of a Weyl sequence through mix64.
  for (uint64_t& w : s_) {
    key += 0x9e3779b97f4a7c15ULL;
    w = mix64(key);
  }
  if ((s_[0] | s_[1] | s_[2] | s_[3]) == 0) s_[0] = 1;  // xoshiro must not be all zero
}

uint64_t Rng::next_u64() {
  // xoshiro256** (Blackman and Vigna, 2018).
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() {
  return double(next_u64() >> 11) * 0x1.0p-53;
}

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  // Box-Muller on (0, 1] x [0, 1): u1 > 0 keeps log finite.
  const double u1 = 1.0 - uniform();
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * kPi * u2;
  spare_ = r * std::sin(theta);
  has_spare_ = true;
  return r * std::cos(theta);
}

uint64_t Rng::below(uint64_t n) {
  // Rejection: accept x only below the largest multiple of n that fits in 2^64.
  const uint64_t limit = uint64_t(0) - (uint64_t(0) - n) % n;  // 2^64 - (2^64 mod n), mod 2^64
  for (;;) {
    const uint64_t x = next_u64();
    if (limit == 0 || x < limit) return x % n;
  }
}

Rng::Snapshot Rng::snapshot() const {
  return Snapshot{s_, has_spare_, spare_};
}

void Rng::restore(const Snapshot& s) {
  s_ = s.words;
  has_spare_ = s.has_spare;
  spare_ = s.spare;
}

}  // namespace tenet::train
