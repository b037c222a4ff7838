/// \file
/// exp, log, tanh and erf of float32 as straight-line arithmetic, so that loops of
/// generated code that call them vectorise (the C library's versions are
/// calls GCC cannot vectorise without -ffast-math, and glibc's vector ones,
/// libmvec, round differently from the scalar ones, so an element's bits
/// would depend on where a loop's vector remainder falls: on the thread
/// count and the loop order).
///
/// Guarantees: the same bits for an argument whether the compiler runs the
/// code scalar or in vector lanes (IEEE operations only: explicit fused
/// multiply-adds where the target has them (kFusedMath: 27% faster exp),
/// never a contraction the compiler chooses, as generated code is built with
/// -ffp-contract=off, and no lookup tables);
/// within 1 ulp of the correctly rounded result over all of float32 (2 for
/// erf; tests/codegen/vmath_test.cpp sweeps it); the C library's special
/// values: exp(-inf) = 0, exp(+inf) = +inf, exp overflows to +inf above
/// 88.72 and underflows to 0 below -103.97, log(0) = -inf, log of a negative
/// number is NaN, log(+inf) = +inf, tanh(+-inf) = +-1, tanh(-0) = -0, NaN in
/// gives NaN out, erf(+-inf) = +-1. The polynomials are Cephes' (S. Moshier), reduced as usual:
/// exp(x) = 2^n e^r with |r| <= ln 2 / 2; log(x) = e ln 2 + log(m) with m in
/// [sqrt(1/2), sqrt(2)); tanh from an odd polynomial below |x| = 0.625 and
/// from 1 - 2 / (e^{2|x|} + 1) above.
#pragma once

#if !defined(__CUDACC_RTC__)  // NVRTC: tenet_cuda_device.h includes libcu++'s instead
#include <cstdint>
#include <cstring>
#endif

#if !defined(TENET_HD)  // as tenet_scalar.h defines it
#if defined(__CUDACC__)
#define TENET_HD __host__ __device__
#else
#define TENET_HD
#endif
#endif

namespace tenet::math {

TENET_HD inline uint32_t to_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

TENET_HD inline float from_bits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

/// c ? a : b, without a branch.
TENET_HD inline float blend(bool c, float a, float b) {
  const uint32_t mask = 0u - uint32_t(c);
  return from_bits((to_bits(a) & mask) | (to_bits(b) & ~mask));
}

namespace vmath_detail {

/// a * b + c, rounded once (a fused multiply-add) when Fused, else twice.
/// Both are IEEE operations, the same bits scalar or in vector lanes.
template <bool Fused>
TENET_HD inline float mad(float a, float b, float c) {
#if defined(__CUDA_ARCH__)  // explicit roundings: the device never contracts them
  if constexpr (Fused)
    return __fmaf_rn(a, b, c);
  else
    return __fadd_rn(__fmul_rn(a, b), c);
#else
  if constexpr (Fused)
    return __builtin_fmaf(a, b, c);
  else
    return a * b + c;
#endif
}

/// 2^n for n in [-126, 127], from its exponent bits.
TENET_HD inline float pow2(int32_t n) {
  return from_bits(uint32_t(n + 127) << 23);
}

}  // namespace vmath_detail

namespace vmath_detail {

/// e^x (see the file comment).
template <bool Fused>
TENET_HD inline float exp(float x) {
  // Clamped, n stays in [-150, 129]; results beyond overflow or underflow.
  float xc = blend(x < -104.0f, -104.0f, x);
  xc = blend(xc > 89.0f, 89.0f, xc);
  xc = blend(x != x, 0.0f, xc);  // NaN: any finite n (converting NaN to int is undefined)
  // n = round(x / ln 2): adding 1.5 * 2^23 rounds to an integer.
  const float shifter = 12582912.0f;
  const float t = xc * 1.44269504088896341f + shifter;
  const float n = t - shifter;
  // r = x - n ln 2, with ln 2 in two parts so that n * hi is exact.
  float r = mad<Fused>(n, -0.693359375f, xc);
  r = mad<Fused>(n, 2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = mad<Fused>(p, r, 1.3981999507e-3f);
  p = mad<Fused>(p, r, 8.3334519073e-3f);
  p = mad<Fused>(p, r, 4.1665795894e-2f);
  p = mad<Fused>(p, r, 1.6666665459e-1f);
  p = mad<Fused>(p, r, 5.0000001201e-1f);
  const float er = mad<Fused>(p, r * r, r) + 1.0f;
  // 2^n in two factors, each a normal float, so subnormal results round once
  // more at most and overflow gives +inf.
  const int32_t ni = int32_t(n);
  const int32_t half = ni >> 1;
  const float result = er * pow2(half) * pow2(ni - half);
  return blend(x != x, x, blend(x < -103.972084f, 0.0f, result));
}

/// The natural logarithm (see the file comment).
template <bool Fused>
TENET_HD inline float log(float x) {
  // Subnormals are scaled into the normal range first.
  const bool tiny = x < 1.17549435e-38f;
  const float xs = blend(tiny, x * 33554432.0f, x);  // 2^25
  const uint32_t u = to_bits(xs);
  int32_t e = int32_t((u >> 23) & 0xff) - 126;
  float m = from_bits((u & 0x007fffffu) | 0x3f000000u);  // in [0.5, 1)
  const bool low = m < 0.707106781186547524f;
  e = e - int32_t(low) - 25 * int32_t(tiny);
  m = blend(low, m + m - 1.0f, m - 1.0f);
  const float fe = float(e);
  const float z = m * m;
  float p = 7.0376836292e-2f;
  p = mad<Fused>(p, m, -1.1514610310e-1f);
  p = mad<Fused>(p, m, 1.1676998740e-1f);
  p = mad<Fused>(p, m, -1.2420140846e-1f);
  p = mad<Fused>(p, m, 1.4249322787e-1f);
  p = mad<Fused>(p, m, -1.6668057665e-1f);
  p = mad<Fused>(p, m, 2.0000714765e-1f);
  p = mad<Fused>(p, m, -2.4999993993e-1f);
  p = mad<Fused>(p, m, 3.3333331174e-1f);
  float y = m * z * p;
  y = y + fe * -2.12194440e-4f;
  y = y - 0.5f * z;
  const float result = m + y + fe * 0.693359375f;
  // Special values: NaN and +inf as they are, 0 to -inf, negatives to NaN.
  const float inf = from_bits(0x7f800000u), nan = from_bits(0x7fc00000u);
  float out = blend(x == 0.0f, -inf, result);
  out = blend(x < 0.0f, nan, out);
  return blend(x != x || x == inf, x, out);
}

/// The hyperbolic tangent (see the file comment).
template <bool Fused>
TENET_HD inline float tanh(float x) {
  const uint32_t sign = to_bits(x) & 0x80000000u;
  const float a = from_bits(to_bits(x) & 0x7fffffffu);
  // Small |x|: x + x^3 P(x^2).
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = mad<Fused>(p, z, 2.06390887954e-2f);
  p = mad<Fused>(p, z, -5.37397155531e-2f);
  p = mad<Fused>(p, z, 1.33314422036e-1f);
  p = mad<Fused>(p, z, -3.33332819422e-1f);
  const float small = from_bits(to_bits(a + a * z * p) | sign);  // the sign of x, also for -0
  // Large |x|: 1 - 2 / (e^{2|x|} + 1), which is 1 once e^{2|x|} is +inf.
  const float large = from_bits(to_bits(1.0f - 2.0f / (exp<Fused>(a + a) + 1.0f)) | sign);
  return blend(a < 0.625f, small, large);
}

/// The error function: Cephes' odd polynomial below |x| = 1; above, 1 -
/// erfc(|x|) with erfc(a) = e^{-a^2} / a * P(1 / a^2) (one P below 2, another
/// above), with the sign of x. Within 2 ulp (the extra one near 0).
template <bool Fused>
TENET_HD inline float erf(float x) {
  const uint32_t sign = to_bits(x) & 0x80000000u;
  const float a = from_bits(to_bits(x) & 0x7fffffffu);
  const float z = x * x;
  float t = 7.853861353153693e-5f;
  t = mad<Fused>(t, z, -8.010193625184903e-4f);
  t = mad<Fused>(t, z, 5.188327685732524e-3f);
  t = mad<Fused>(t, z, -2.685381193529856e-2f);
  t = mad<Fused>(t, z, 1.128358514861418e-1f);
  t = mad<Fused>(t, z, -3.761262582423300e-1f);
  t = mad<Fused>(t, z, 1.128379165726710e0f);
  const float small = x * t;
  const float al = blend(a < 1.0f, 1.0f, a);  // keeps the unused branch finite
  const float q = 1.0f / al, y = q * q;
  float p = 2.326819970068386e-2f;
  p = mad<Fused>(p, y, -1.387039388740657e-1f);
  p = mad<Fused>(p, y, 3.687424674597105e-1f);
  p = mad<Fused>(p, y, -5.824733027278666e-1f);
  p = mad<Fused>(p, y, 6.210004621745983e-1f);
  p = mad<Fused>(p, y, -4.944515323274145e-1f);
  p = mad<Fused>(p, y, 3.404879937665872e-1f);
  p = mad<Fused>(p, y, -2.741127028184656e-1f);
  p = mad<Fused>(p, y, 5.638259427386472e-1f);
  float r = -1.047766399936249e1f;
  r = mad<Fused>(r, y, 1.297719955372516e1f);
  r = mad<Fused>(r, y, -7.495518717768503e0f);
  r = mad<Fused>(r, y, 2.921019019210786e0f);
  r = mad<Fused>(r, y, -1.015265279202700e0f);
  r = mad<Fused>(r, y, 4.218463358204948e-1f);
  r = mad<Fused>(r, y, -2.820767439740514e-1f);
  r = mad<Fused>(r, y, 5.641895067754075e-1f);
  const float erfc = exp<Fused>(-al * al) * q * blend(al < 2.0f, p, r);
  const float large = from_bits(to_bits(1.0f - erfc) | sign);
  return blend(x != x, x, blend(a < 1.0f, small, large));
}

}  // namespace vmath_detail

/// Whether the polynomials use fused multiply-adds: where the target has
/// FMA instructions (x86-64-v3, every AVX2 machine; AArch64), which the JIT's
/// -march=native enables. Each choice is exact to its own contract; the bits
/// differ between the two in the last place.
#if defined(__FMA__) || defined(__aarch64__) || defined(__CUDA_ARCH__)
inline constexpr bool kFusedMath = true;
#else
inline constexpr bool kFusedMath = false;
#endif

TENET_HD inline float exp(float x) {
  return vmath_detail::exp<kFusedMath>(x);
}
TENET_HD inline float log(float x) {
  return vmath_detail::log<kFusedMath>(x);
}
TENET_HD inline float tanh(float x) {
  return vmath_detail::tanh<kFusedMath>(x);
}
TENET_HD inline float erf(float x) {
  return vmath_detail::erf<kFusedMath>(x);
}

}  // namespace tenet::math
