/// \file
/// The scalar helpers generated code calls element by element, for the CPU
/// (through tenet_runtime.h) and for the kernels of the CUDA target
/// (through tenet_cuda_device.h, compiled by NVRTC or nvcc): one
/// implementation, so that a kernel gives the same bits on the GPU as on the
/// grid emulator (tenet_emulator.h) and the reference interpreter, which
/// calls the same formulas. Every function is `TENET_HD`: __host__
/// __device__ under a CUDA compiler, plain inline C++ otherwise.
///
/// Expects: C++17; on the host the standard library, under NVRTC the
/// libcu++ headers tenet_cuda_device.h includes first. Guarantees: no
/// allocation, no branch on data where the comments say so (vectorisable).
#pragma once

#if defined(__CUDACC__)
#define TENET_HD __host__ __device__
#else
#define TENET_HD
#endif

#if !defined(__CUDACC_RTC__)
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#endif

#include "tenet_vmath.h"

namespace tenet {

// ---- Element-wise math ------------------------------------------------------

/// Max and min of floats, element-wise and in reductions. The rule is IEEE
/// 754-2019's maximumNumber and minimumNumber: the larger (smaller) operand,
/// -0 counted below +0, a NaN operand ignored (two NaN give the first).
/// Without NaN operands the operation is commutative and associative to the
/// bit, so a max or min reduction gives the same bits in any order (a
/// reduction starts from -inf or +inf and never holds a NaN): generated code
/// may split one into vector lanes. The interpreter calls these functions.
/// The choice is a bitwise blend rather than `c ? a : b` or a branch: GCC
/// vectorises a loop with a branch only through if-conversion, which the JIT
/// turns off (jit/jit.cpp, compiler_workaround_flags).
namespace math {

// to_bits, from_bits and blend (c ? a : b without a branch): tenet_vmath.h.

namespace order_detail {

/// The bits of `x`, and a float or double from bits.
TENET_HD inline uint32_t bits(float x) {
  return to_bits(x);
}
TENET_HD inline uint64_t bits(double x) {
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
template <typename T, typename U>
TENET_HD inline T from(U u) {
  T x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

}  // namespace order_detail

TENET_HD inline double blend(bool c, double a, double b) {
  using order_detail::bits;
  const uint64_t mask = uint64_t(0) - uint64_t(c);
  return order_detail::from<double>((bits(a) & mask) | (bits(b) & ~mask));
}

namespace order_detail {

// The tie (a == b: +0 and -0, or equal bits) costs one comparison and one
// bitwise operation on top of the fmax blend: for max the blend gave b, and
// b & a clears the sign if either operand's is clear; for min, b | a sets it
// (the max-pool of a 2x2 window: 0.138 ms with the blend alone, 0.161 with
// this, 0.210 with a second blend).
template <typename T>
TENET_HD inline T max_number(T a, T b) {
  using U = decltype(bits(a));
  const T larger = blend((a > b) | (b != b), a, b);
  const U tie = U(0) - U(a == b);
  return from<T>(bits(larger) & (bits(a) | ~tie));
}

template <typename T>
TENET_HD inline T min_number(T a, T b) {
  using U = decltype(bits(a));
  const T smaller = blend((a < b) | (b != b), a, b);
  const U tie = U(0) - U(a == b);
  return from<T>(bits(smaller) | (bits(a) & tie));
}

}  // namespace order_detail

/// maximumNumber (see above): of +0 and -0, +0 in either order.
TENET_HD inline float max(float a, float b) {
  return order_detail::max_number(a, b);
}
TENET_HD inline double max(double a, double b) {
  return order_detail::max_number(a, b);
}

/// minimumNumber (see above): of +0 and -0, -0 in either order.
TENET_HD inline float min(float a, float b) {
  return order_detail::min_number(a, b);
}
TENET_HD inline double min(double a, double b) {
  return order_detail::min_number(a, b);
}

}  // namespace math

/// c ? a : b with both a and b evaluated and no branch: generated code writes
/// it for a select whose branches are safe to evaluate where they are not
/// taken (codegen/cpp_expr.cpp), so that its loop vectorises although the JIT
/// turns GCC's if-conversion off. The bits of the chosen operand, as `?:`.
template <typename T>
TENET_HD inline T select(bool c, T a, T b) {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, "a number type");
  if constexpr (std::is_floating_point_v<T>) {
    return math::blend(c, a, b);
  } else {
    using U = std::make_unsigned_t<T>;
    const U mask = U(U(0) - U(c));
    return T(U((U(a) & mask) | (U(b) & U(~mask))));
  }
}

/// 1 / sqrt(x), like the interpreter (TC's rsqrt).
TENET_HD inline float rsqrt(float x) {
  return 1.0f / std::sqrt(x);
}
TENET_HD inline double rsqrt(double x) {
  return 1.0 / std::sqrt(x);
}

/// The logistic function, written as 1 / (1 + exp(-x)) like the interpreter
/// (float32 with tenet::math::exp).
TENET_HD inline float sigmoid(float x) {
  return 1.0f / (1.0f + math::exp(-x));
}
TENET_HD inline double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

/// -1, 0 or 1 by the sign of x; 0 and NaN are returned as they are (torch.sign).
TENET_HD inline float sign(float x) {
  return x > 0 ? 1.0f : x < 0 ? -1.0f : x;
}
TENET_HD inline double sign(double x) {
  return x > 0 ? 1.0 : x < 0 ? -1.0 : x;
}

/// Floor division (rounds toward negative infinity), as '/' in size
/// expressions of the IR is defined; the divisor is a positive constant there.
template <typename T>
TENET_HD constexpr T floordiv(T a, T b) {
  T q = T(a / b);
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

/// Ceiling division (rounds toward positive infinity): the first value of a
/// reduce loop narrowed by a guard `k*r >= n` (lower/loop_bounds.h).
template <typename T>
TENET_HD constexpr T ceildiv(T a, T b) {
  T q = T(a / b);
  if ((a % b != 0) && ((a < 0) == (b < 0))) ++q;
  return q;
}

// Integer arithmetic of the IR wraps around (two's complement) at the width of
// its type. + - * are plain C++ operators compiled with -fwrapv (narrow types
// are cast back after each operation); the helpers below cover the operations
// whose C++ versions trap or are undefined even then.

/// Integer division truncating toward zero, like C. A zero divisor gives 0
/// (the interpreter reports it as an error); x / -1 wraps instead of trapping.
template <typename T>
TENET_HD constexpr T int_div(T a, T b) {
  if (b == 0) return T(0);
  if constexpr (std::is_unsigned_v<T>) {
    return T(a / b);
  } else {
    if (int64_t(b) == -1) return T(uint64_t(0) - uint64_t(a));
    return T(int64_t(a) / int64_t(b));
  }
}

/// The remainder of int_div: a - b * int_div(a, b), with C's sign (that of
/// a); a zero divisor gives 0 (the interpreter reports it), x % -1 is 0.
template <typename T>
TENET_HD constexpr T int_rem(T a, T b) {
  if (b == 0) return T(0);
  if constexpr (std::is_unsigned_v<T>) {
    return T(a % b);
  } else {
    if (int64_t(b) == -1) return T(0);
    return T(int64_t(a) % int64_t(b));
  }
}

/// |x| for integers; the most negative value stays itself (wraps), as in the interpreter.
template <typename T>
TENET_HD constexpr T int_abs(T x) {
  if constexpr (std::is_unsigned_v<T>) return x;
  return int64_t(x) < 0 ? T(uint64_t(0) - uint64_t(x)) : x;
}

/// Float to integer conversion: truncates toward zero; NaN gives 0, values
/// beyond the int64 range saturate, and the int64 result wraps to T's width
/// (-1.0 gives 255 as a uint8). uint64 holds [2^63, 2^64) exactly and
/// saturates above. (A plain C++ cast is undefined for NaN and out-of-range values.)
template <typename T, typename F>
TENET_HD constexpr T float_to_int(F x) {
  if (x != x) return T(0);
  if constexpr (std::is_same_v<T, uint64_t>) {
    if (x >= F(18446744073709551615.0)) return std::numeric_limits<uint64_t>::max();
    if (x >= F(9223372036854775807.0)) return uint64_t(x);
  }
  if (x >= F(9223372036854775807.0)) return T(std::numeric_limits<int64_t>::max());
  if (x <= F(-9223372036854775808.0)) return T(std::numeric_limits<int64_t>::min());
  return T(int64_t(x));
}

// ---- float16 storage --------------------------------------------------------

// A float16 tensor holds IEEE binary16 bit patterns (uint16_t in the C ABI,
// numpy's float16); its elements are computed in float32: loads widen them
// (exact), stores round to nearest, ties to even. Portable bit arithmetic
// rather than _Float16 or F16C intrinsics, so that every compiler and
// machine, and the interpreter, give the same bits (docs/language.md).

/// The float32 value of a binary16 bit pattern (exact; NaNs stay NaN).
TENET_HD inline float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float magnitude = float(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return math::from_bits(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
  return math::from_bits(sign | ((exponent + 112) << 23) | (mantissa << 13));  // rebias 15 -> 127
}

/// x rounded to the nearest binary16 (ties to even); beyond the largest
/// finite half (65504) it rounds to infinity, NaNs stay (quiet) NaNs.
TENET_HD inline uint16_t float_to_half(float x) {
  const uint32_t u = math::to_bits(x);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const uint32_t magnitude = u & 0x7fffffffu;
  if (magnitude >= 0x7f800000u)  // inf, or NaN keeping its top payload bits
    return uint16_t(sign | 0x7c00u |
                    (magnitude > 0x7f800000u ? 0x200u | ((magnitude >> 13) & 0x3ffu) : 0u));
  if (magnitude >= 0x47800000u) return uint16_t(sign | 0x7c00u);  // >= 65536: infinity
  if (magnitude < 0x38800000u) {
    // Below 2^-14, the smallest normal half: subnormal steps of 2^-24. Adding
    // 0.5 (whose float ulp is 2^-24) lets the float addition round to the
    // step, ties to even; the step count is then the low bits of the sum.
    const float sum = math::from_bits(magnitude) + 0.5f;
    return uint16_t(sign | (math::to_bits(sum) - 0x3f000000u));
  }
  // Normal: rebias the exponent (127 -> 15) and drop 13 mantissa bits,
  // rounding half to even; a carry into the exponent is correct (up to inf).
  const uint32_t odd = (magnitude >> 13) & 1u;
  const uint32_t rounded = magnitude - (112u << 23) + 0xfffu + odd;
  return uint16_t(sign | (rounded >> 13));
}

/// True when 0 <= i < n: the test a guarded read makes for each index that
/// the compiler cannot prove in bounds.
TENET_HD constexpr bool in_bounds(int64_t i, int64_t n) {
  return i >= 0 && i < n;
}

// ---- Reductions -------------------------------------------------------------

/// The starting value of a max reduction: -inf for floats, the lowest integer.
template <typename T>
TENET_HD constexpr T max_identity() {
  if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
  return std::numeric_limits<T>::lowest();
}

/// The starting value of a min reduction: +inf for floats, the largest integer.
template <typename T>
TENET_HD constexpr T min_identity() {
  if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
  return std::numeric_limits<T>::max();
}

}  // namespace tenet
