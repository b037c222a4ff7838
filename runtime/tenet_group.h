/// \file
/// Grouped reduction kernels (lower/kernel_groups.h): each reduced element
/// is computed by a group of `lanes` threads of one block, which combine
/// their partial results by a fixed tree. This header has what the CUDA
/// kernels (tenet_cuda_device.h), the grid emulator (tenet_emulator.h) and
/// the host code that launches them share: the combination of each
/// reduction, the tree, and the rule that picks `lanes` from the shape.
///
/// The tree is the one of CUDA's warp shuffles: within each warp of the
/// group, for offset = width/2, ..., 1, lane i takes combine(v[i], v[i +
/// offset]); then the same over the warps' first lanes. A group's first
/// lane ends with the group's value. tenet_cuda_device.h computes it with
/// __shfl_down_sync and shared memory, the emulator over an array of the
/// lanes' values (group_tree); both give the same bits.
///
/// Expects: C++17 (host), or CUDA C++ under NVRTC or nvcc after
/// tenet_cuda_device.h's standard names. Guarantees: lanes is a power of two
/// of at most kMaxGroupLanes, a function of the shape alone.
#pragma once

#include "tenet_scalar.h"

namespace tenet {

/// The reductions a group combines, as ir::ReduceOp names them.
enum class Combine { Sum, Max, Min, Prod };

template <Combine C, typename T>
TENET_HD inline T combine(T a, T b) {
  if constexpr (C == Combine::Sum) {
    return a + b;
  } else if constexpr (C == Combine::Prod) {
    return a * b;
  } else if constexpr (std::is_floating_point_v<T>) {
    return C == Combine::Max ? math::max(a, b) : math::min(a, b);
  } else {
    return C == Combine::Max ? (a < b ? b : a) : (b < a ? b : a);
  }
}

/// The threads of a warp, and the most lanes a group has (a block holds
/// whole groups: its threads are a multiple of this).
constexpr int64_t kWarpLanes = 32;
constexpr int64_t kMaxGroupLanes = 256;

/// The lanes per element of a grouped kernel with `elements` elements and
/// reductions of `length` terms: doubled while each lane still has 8 terms
/// or more and the grid has fewer than 2^17 threads (about half of what an
/// H100's 132 multiprocessors hold), so few long reductions spread over
/// many threads and many short ones keep a thread each.
TENET_HD constexpr int64_t group_lanes(int64_t elements, int64_t length) {
  int64_t lanes = 1;
  while (lanes < kMaxGroupLanes && lanes * 16 <= length &&
         elements * lanes * 2 <= (int64_t(1) << 17))
    lanes *= 2;
  return lanes;
}

/// What the first lane of a group ends with, from the lanes' values `v` (in
/// lane order; overwritten): the warp shuffles' tree, then the warps'.
template <Combine C, typename T>
TENET_HD inline T group_tree(T* v, int64_t lanes) {
  const int64_t width = lanes < kWarpLanes ? lanes : kWarpLanes;
  for (int64_t warp = 0; warp < lanes; warp += width)
    for (int64_t offset = width / 2; offset > 0; offset /= 2)
      for (int64_t i = 0; i < offset; ++i)
        v[warp + i] = combine<C>(v[warp + i], v[warp + i + offset]);
  if (lanes <= kWarpLanes) return v[0];
  const int64_t warps = lanes / kWarpLanes;
  for (int64_t w = 1; w < warps; ++w) v[w] = v[w * kWarpLanes];
  for (int64_t offset = warps / 2; offset > 0; offset /= 2)
    for (int64_t i = 0; i < offset; ++i) v[i] = combine<C>(v[i], v[i + offset]);
  return v[0];
}

}  // namespace tenet
