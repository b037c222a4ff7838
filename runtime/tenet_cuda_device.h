/// \file
/// What the kernels of the CUDA target include (codegen's Kernels::Cuda),
/// compiled by NVRTC at run time or by nvcc in an emitted project: the
/// scalar helpers every backend shares (tenet_scalar.h, tenet_vmath.h, the
/// same formulas as the CPU code and the interpreter) and the record of an
/// out-of-range computed index. Under NVRTC there is no C++ standard
/// library: libcu++ (part of the CUDA toolkit) provides the parts the
/// helpers and the kernels name as std:: (<cstdint>, <limits>,
/// <type_traits>, <cmath>, <cstring>), the CUDA math library the rest.
///
/// Expects: a CUDA C++17 compiler, the toolkit's include folders on the
/// include path (NVRTC: `-I<cuda>/include/cccl -I<cuda>/include`), compiled
/// without fast-math (`--fmad=false`: no contraction the source does not
/// write, like the host's -ffp-contract=off). Guarantees: float32 exp, log,
/// tanh and erf are Tenet's own (tenet_vmath.h, with explicit fused
/// multiply-adds), so they give the bits of the grid emulator on a host with
/// FMA; float64 transcendental functions are the CUDA math library's (within
/// its documented ulps of the host's).
#pragma once

#if defined(__CUDACC_RTC__)
#include <cuda/std/cmath>
#include <cuda/std/cstdint>
#include <cuda/std/cstring>
#include <cuda/std/limits>
#include <cuda/std/type_traits>

// The standard names the helpers and the kernels use, from libcu++ and the
// CUDA math library (NVRTC declares namespace std and nothing in it).
namespace std {
using namespace ::cuda::std;
// The CUDA math library's, where libcu++ has no std:: name for them.
using ::acos;
using ::asin;
using ::atan;
using ::atan2;
using ::cbrt;
using ::ceil;
using ::copysign;
using ::cos;
using ::cosh;
using ::erf;
using ::erfc;
using ::exp2;
using ::expm1;
using ::floor;
using ::hypot;
using ::log10;
using ::log1p;
using ::log2;
using ::nextafter;
using ::pow;
using ::rint;
using ::round;
using ::sin;
using ::sinh;
using ::tan;
using ::trunc;
template <typename T>
__host__ __device__ constexpr const T& min(const T& a, const T& b) {
  return b < a ? b : a;
}
template <typename T>
__host__ __device__ constexpr const T& max(const T& a, const T& b) {
  return a < b ? b : a;
}
}  // namespace std

using ::cuda::std::int16_t;
using ::cuda::std::int32_t;
using ::cuda::std::int64_t;
using ::cuda::std::int8_t;
using ::cuda::std::uint16_t;
using ::cuda::std::uint32_t;
using ::cuda::std::uint64_t;
using ::cuda::std::uint8_t;
#else
#include <cmath>
#include <cstdint>
#endif

#include "tenet_group.h"
#include "tenet_scalar.h"

namespace tenet {

/// Where a computed index is read (as tenet_index.h's, for the message).
struct IndexSite {
  const char* index;
  const char* read;
  const char* tensor;
  int dimension;
  const char* statement;
  const char* names;
};

/// The first out-of-range computed index of a launch, in device memory: the
/// host reads it after the call and fails it with the message.
struct IndexFault {
  unsigned int claimed;  // 0 until a thread records a fault
  int64_t value, extent;

  __device__ void record(int64_t v, int64_t n) {
    if (atomicCAS(&claimed, 0u, 1u) != 0u) return;  // the first one wins
    value = v;
    extent = n;
  }
};

/// `value` when it lies in [0, extent); otherwise records the fault and
/// returns 0, as the host's checked_index (tenet_index.h).
template <typename... At>
__device__ inline int64_t checked_index(int64_t value, int64_t extent, IndexFault& fault,
                                        const IndexSite&, At...) {
  if (static_cast<uint64_t>(value) < static_cast<uint64_t>(extent)) return value;
  fault.record(value, extent);
  return 0;
}

/// One exact step of a computed index's int64 arithmetic, as the host's
/// index_step: a result int64 cannot hold (or a division by zero) records
/// the fault and gives 0.
template <char Op, typename... At>
__device__ inline int64_t index_step(int64_t a, int64_t b, IndexFault& fault, const IndexSite&,
                                     At...) {
  constexpr int64_t kMax = INT64_MAX, kMin = INT64_MIN;
  int64_t out = 0;
  bool exact = true;
  switch (Op) {
    case '+':
      exact = b >= 0 ? a <= kMax - b : a >= kMin - b;
      out = exact ? a + b : 0;
      break;
    case '-':
      exact = b >= 0 ? a >= kMin + b : a <= kMax + b;
      out = exact ? a - b : 0;
      break;
    case '*': {
      // The high half of the 128-bit product is the sign of the low one.
      out = int64_t(uint64_t(a) * uint64_t(b));
      exact = __mul64hi(a, b) == (out < 0 ? -1 : 0);
      break;
    }
    case '~':
      exact = a != kMin;
      out = exact ? -a : 0;
      break;
    case '/':
      exact = b != 0 && !(a == INT64_MIN && b == -1);
      out = exact ? a / b : 0;
      break;
    case '%':
      exact = b != 0;
      out = !exact || b == -1 ? 0 : a % b;
      break;
  }
  if (exact) return out;
  fault.record(a, b);
  return 0;
}

/// `v` of the lane `offset` places up in the warp (its own past the warp's end).
template <typename T>
__device__ inline T shuffle_down(T v, int offset) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "a group combines 4- or 8-byte values");
  if constexpr (sizeof(T) == 4) {
    unsigned int bits;
    std::memcpy(&bits, &v, sizeof bits);
    bits = __shfl_down_sync(0xffffffffu, bits, unsigned(offset));
    std::memcpy(&v, &bits, sizeof bits);
  } else {
    unsigned long long bits;
    std::memcpy(&bits, &v, sizeof bits);
    bits = __shfl_down_sync(0xffffffffu, bits, unsigned(offset));
    std::memcpy(&v, &bits, sizeof bits);
  }
  return v;
}

/// The group reduction of a grouped kernel (tenet_group.h): every thread of
/// the block calls it once with its lane's value `v`; the group's first lane
/// gets the group's value (group_tree's bits), the others a partial one.
/// `thread` is the thread's index in its block, `lanes` the group's size (a
/// power of two that divides the block, uniform over it). Once per kernel:
/// a second call could overwrite the shared values the first still reads.
template <Combine C, typename T>
__device__ inline T group_reduce(T v, unsigned int thread, int64_t lanes) {
  const int width = lanes < kWarpLanes ? int(lanes) : int(kWarpLanes);
  for (int offset = width / 2; offset > 0; offset /= 2) v = combine<C>(v, shuffle_down(v, offset));
  if (lanes <= kWarpLanes) return v;
  // The warps' first lanes, through shared memory, reduced by the group's first warp.
  __shared__ T warp_values[32];  // one per warp of a block (at most 1024 threads)
  const unsigned int warp = thread / unsigned(kWarpLanes), lane = thread % unsigned(kWarpLanes);
  if (lane == 0) warp_values[warp] = v;
  __syncthreads();
  const int warps = int(lanes / kWarpLanes);
  if (thread % unsigned(lanes) < unsigned(kWarpLanes)) {  // the group's first warp
    T w = lane < unsigned(warps) ? warp_values[warp + lane] : v;
    for (int offset = warps / 2; offset > 0; offset /= 2)
      w = combine<C>(w, shuffle_down(w, offset));
    v = w;
  }
  return v;
}

}  // namespace tenet
