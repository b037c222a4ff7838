/// \file
/// The Tenet runtime: the few inline helpers that generated C++ includes.
///
/// Expects: C++17, the standard library, nothing else. Guarantees: every
/// helper is header-only, allocation-free (except Workspace) and gives the
/// same results as the reference interpreter (ir/interp.cpp), which calls the
/// same formulas: sigmoid, floor division, bounds checks, reduction
/// identities and workspace planning. tenet::math::max/min (float max and
/// min, element-wise and in reductions) are branch-free maximumNumber and
/// minimumNumber, so they inline, vectorise and reduce in any order.
/// float32 exp, log, tanh and sigmoid are Tenet's own (tenet_vmath.h), so
/// that their loops vectorise with the same bits as scalar code; the other
/// transcendental functions, and float64, are the C library's.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>

#include "tenet_scalar.h"
#include "tenet_vmath.h"

namespace tenet {
namespace lanes_detail {

// GCC's vector extension (also Clang's): halves of 16 lanes of float and double.
typedef float F8 __attribute__((vector_size(32)));
typedef float F4 __attribute__((vector_size(16)));
typedef double D8 __attribute__((vector_size(64)));
typedef double D4 __attribute__((vector_size(32)));

/// math::max (Max) or math::min of the lanes of two vectors, into `out`: the
/// same rule, with comparison masks (all bits set or clear) instead of bools.
/// (Vectors by reference: by value, their ABI depends on the target's flags.)
template <bool Max, typename V>
inline void pick(const V& a, const V& b, V& out) {
  const auto take_a = Max ? ((a > b) | (b != b)) : ((a < b) | (b != b));
  using M = decltype(take_a);
  const M tie = a == b, ab = (M)a;
  const M chosen = (ab & take_a) | ((M)b & ~take_a);
  out = (V)(Max ? chosen & (ab | ~tie) : chosen | (ab & tie));  // as order_detail::max_number
}

/// The low and the high half of `v`.
template <typename Half, typename V>
inline void halves(const V& v, Half& lo, Half& hi) {
  static_assert(2 * sizeof(Half) == sizeof(V), "halves of the vector");
  std::memcpy(&lo, &v, sizeof lo);
  std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
}

/// The two halves of `v` picked lane by lane, into `out`.
template <bool Max, typename Half, typename V>
inline void fold_half(const V& v, Half& out) {
  Half lo, hi;
  halves(v, lo, hi);
  pick<Max>(lo, hi, out);
}

/// Four lanes folded to one, in one register: picked against themselves
/// swapped (2 3 0 1), then again (1 0 3 2). (A vector of two lanes, the
/// halving one step further, went through the stack, once per row of a
/// softmax.)
template <bool Max, typename Four>
inline auto fold_four(const Four& four) {
  Four swapped = __builtin_shufflevector(four, four, 2, 3, 0, 1), two, one;
  pick<Max>(four, swapped, two);
  swapped = __builtin_shufflevector(two, two, 1, 0, 3, 2);
  pick<Max>(two, swapped, one);
  return one[0];
}

/// 16 lanes folded to one: halves of 8, of 4, then fold_four.
template <bool Max, typename Eight, typename Four, typename T>
inline T fold_sixteen(const T* lanes) {
  Eight lo, hi, eight;
  Four four;
  std::memcpy(&lo, lanes, sizeof lo);
  std::memcpy(&hi, lanes + 8, sizeof hi);
  pick<Max>(lo, hi, eight);
  fold_half<Max>(eight, four);
  return fold_four<Max>(four);
}

}  // namespace lanes_detail

/// Reduces `N` partial maxima (Max) or minima of a reduction in vector lanes
/// (passes/schedule.h, 4) to one. maximumNumber and minimumNumber are
/// commutative and associative on them (a lane never holds a NaN), so the
/// pairwise order, halves of a vector at a time, gives the bits of any order.
template <bool Max, int N, typename T>
inline T fold_lanes(const T* lanes) {
  using namespace lanes_detail;
  static_assert(N >= 2 && (N & (N - 1)) == 0, "a power of two of lanes");
  auto two = [](T a, T b) {
    if constexpr (std::is_floating_point_v<T>)
      return Max ? math::max(a, b) : math::min(a, b);
    else
      return Max ? std::max(a, b) : std::min(a, b);
  };
  if constexpr (N == 16 && std::is_same_v<T, float>) {
    return fold_sixteen<Max, F8, F4>(lanes);
  } else if constexpr (N == 16 && std::is_same_v<T, double>) {
    return fold_sixteen<Max, D8, D4>(lanes);
  } else {
    T acc = lanes[0];
    for (int l = 1; l < N; ++l) acc = two(acc, lanes[l]);
    return acc;
  }
}

/// Adds the `n` (a power of two) partial sums of a float32 sum in vector
/// lanes (passes/schedule.h, 4), each a double, in the order the language
/// fixes (docs/language.md): lane k + n/2 onto lane k, then k + n/4 onto k,
/// ..., down to one; returns lanes[0]. Overwrites the lanes. The interpreter
/// calls it as it is; compiled code through sum_lanes<N>.
inline double sum_lanes_in_place(double* lanes, int64_t n) {
  for (int64_t width = n / 2; width >= 1; width /= 2)
    for (int64_t k = 0; k < width; ++k) lanes[k] += lanes[k + width];
  return lanes[0];
}

namespace lanes_detail {

/// sum_lanes_in_place's last two steps on four lanes, in one register:
/// (l0 + l2) + (l1 + l3).
inline double sum_four(const D4& four) {
  const D4 two = four + __builtin_shufflevector(four, four, 2, 3, 0, 1);
  const D4 one = two + __builtin_shufflevector(two, two, 1, 0, 3, 2);
  return one[0];
}

}  // namespace lanes_detail

/// sum_lanes_in_place, the same additions in the same order, as vector
/// halves (16 to 8 to 4 lanes) and shuffles of the last four.
template <int N>
inline double sum_lanes(const double* lanes) {
  using namespace lanes_detail;
  static_assert(N >= 2 && (N & (N - 1)) == 0, "a power of two of lanes");
  if constexpr (N == 16) {
    D8 lo, hi;
    std::memcpy(&lo, lanes, sizeof lo);
    std::memcpy(&hi, lanes + 8, sizeof hi);
    D4 a, b;
    halves(D8(lo + hi), a, b);
    return sum_four(a + b);
  } else if constexpr (N == 8) {
    D4 lo, hi;
    std::memcpy(&lo, lanes, sizeof lo);
    std::memcpy(&hi, lanes + 4, sizeof hi);
    return sum_four(lo + hi);
  } else if constexpr (N == 4) {
    D4 four;
    std::memcpy(&four, lanes, sizeof four);
    return sum_four(four);
  } else {
    double copy[N];
    for (int k = 0; k < N; ++k) copy[k] = lanes[k];
    return sum_lanes_in_place(copy, N);
  }
}

// ---- Workspace --------------------------------------------------------------

/// Temporaries start on 64-byte boundaries (a cache line, an AVX-512 vector).
constexpr int64_t kWorkspaceAlignment = 64;

/// The most bytes one temporary may take (2^60): far beyond any machine, and
/// small enough that a double-buffered temporary's 2 * bytes, and the sum of
/// a few, cannot overflow before plan_workspace checks them.
constexpr int64_t kMaxWorkspaceBytes = int64_t(1) << 60;

/// Bytes a temporary of `count` elements of T takes in a workspace, rounded up
/// to the alignment so the next one starts aligned too; -1 (which
/// plan_workspace refuses) for a negative count or one beyond kMaxWorkspaceBytes.
template <typename T>
constexpr int64_t workspace_bytes(int64_t count) {
  if (count < 0 || count > kMaxWorkspaceBytes / int64_t(sizeof(T))) return -1;
  int64_t bytes = count * int64_t(sizeof(T));
  return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

/// The temporary at byte `offset` of a workspace.
template <typename T>
inline T* workspace_at(void* workspace, int64_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(workspace) + offset);
}

/// One temporary (a tenant of the workspace): its bytes (a multiple of the
/// alignment) and the statements it holds a value across, numbered in order.
struct WorkspaceTenant {
  int64_t bytes;
  int first, last;
};

/// The memory plan: gives each tenant a byte offset such that two tenants
/// whose statement ranges [first, last] overlap never overlap in memory, and
/// returns the bytes the workspace needs. Greedy by size: the largest tenant
/// first, each at the lowest offset that is free for its whole range (ties in
/// size by order of appearance), so the result is deterministic. O(N^2) time,
/// no allocation: generated code calls it on every call with N of a few
/// hundred at most. Returns -1 when a tenant's bytes are negative (see
/// workspace_bytes) or the workspace would not fit in int64_t.
template <size_t N>
int64_t plan_workspace(const WorkspaceTenant (&tenants)[N], int64_t (&offsets)[N]) {
  for (size_t i = 0; i < N; ++i)
    if (tenants[i].bytes < 0) return -1;
  // By size, largest first (insertion sort: stable, allocation-free).
  size_t by_size[N];
  for (size_t i = 0; i < N; ++i) {
    size_t j = i;
    for (; j > 0 && tenants[by_size[j - 1]].bytes < tenants[i].bytes; --j)
      by_size[j] = by_size[j - 1];
    by_size[j] = i;
  }
  // Placed tenants by offset; each new one goes at the first gap that fits
  // between the tenants it coexists with.
  size_t placed[N];
  int64_t total = 0;
  for (size_t n = 0; n < N; ++n) {
    const WorkspaceTenant& t = tenants[by_size[n]];
    int64_t at = 0;
    for (size_t p = 0; p < n; ++p) {
      const WorkspaceTenant& other = tenants[placed[p]];
      if (other.last < t.first || t.last < other.first) continue;  // never live together
      const int64_t other_at = offsets[placed[p]];
      if (t.bytes <= other_at - at) break;  // (at + bytes could overflow)
      at = std::max(at, other_at + other.bytes);
    }
    int64_t end;
    if (__builtin_add_overflow(at, t.bytes, &end)) return -1;
    offsets[by_size[n]] = at;
    total = std::max(total, end);
    size_t p = n;
    for (; p > 0 && offsets[placed[p - 1]] > at; --p) placed[p] = placed[p - 1];
    placed[p] = by_size[n];
  }
  return total;
}

/// How many of `extent` slices (each `slice_bytes` of scratch memory) one
/// chunk of a chunked statement takes: as many as fit in `budget_bytes` (at
/// least one), then evened out so that the chunks have almost equal size
/// (100 in chunks of at most 11 gives 10 chunks of 10).
constexpr int64_t chunk_extent(int64_t extent, int64_t slice_bytes, int64_t budget_bytes) {
  if (extent <= 1 || slice_bytes <= 0) return extent < 1 ? 1 : extent;
  int64_t fit = budget_bytes / slice_bytes;
  if (fit < 1) fit = 1;
  if (fit >= extent) return extent;
  const int64_t chunks = (extent + fit - 1) / fit;
  return (extent + chunks - 1) / chunks;
}

/// An owned, aligned workspace for callers that do not bring their own.
class Workspace {
 public:
  explicit Workspace(int64_t bytes) {
    if (bytes < 0) throw std::bad_alloc();  // workspace_bytes refused the sizes
    if (bytes == 0) return;
    data_ = std::aligned_alloc(size_t(kWorkspaceAlignment), size_t(bytes));
    if (!data_) throw std::bad_alloc();
  }
  ~Workspace() { std::free(data_); }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
};

}  // namespace tenet
