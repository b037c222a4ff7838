// The float32 exp, log, tanh and erf of generated code (runtime/tenet_vmath.h),
// with fused multiply-adds and without:
// within 1 ulp (erf 2) of the correctly rounded value across float32 (a sweep of
// every 251st bit pattern, against the double-precision C library), the C
// library's special values, and the same bits from vectorised JIT code as
// from a scalar call.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "driver/driver.h"
#include "runtime/tenet_runtime.h"
#include "tests/codegen/codegen_test_util.h"

namespace tenet::codegen {
namespace {

using testing::compile_tn;
using testing::test_jit_options;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

float from_bits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

uint32_t to_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

/// Distance in units in the last place between `got` and `want` rounded to
/// float (0 for two NaNs or two equal infinities, huge for a mismatch).
int64_t ulps(float got, double want) {
  const float w = float(want);
  if (std::isnan(w) || std::isnan(got)) return std::isnan(w) && std::isnan(got) ? 0 : 1 << 30;
  if (std::isinf(w) || std::isinf(got)) return got == w ? 0 : 1 << 30;
  auto ordered = [](float f) {  // monotonic in the value, -0 and +0 adjacent
    const int64_t i = int32_t(to_bits(f));
    return i < 0 ? int64_t(INT32_MIN) - i : i;
  };
  const int64_t d = ordered(got) - ordered(w);
  return d < 0 ? -d : d;
}

/// Sweeps one variant (fused multiply-adds or not) of the four functions.
template <bool Fused>
void expect_within_ulp_bounds() {
  SCOPED_TRACE(Fused ? "fused multiply-adds" : "separate multiplies and adds");
  int64_t worst_exp = 0, worst_log = 0, worst_tanh = 0, worst_erf = 0;
  float at_exp = 0, at_log = 0, at_tanh = 0, at_erf = 0;
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 251) {
    const float x = from_bits(uint32_t(u));
    const double xd = x;
    auto track = [](int64_t e, float arg, int64_t& worst, float& at) {
      if (e > worst) worst = e, at = arg;
    };
    track(ulps(math::vmath_detail::exp<Fused>(x), std::exp(xd)), x, worst_exp, at_exp);
    track(ulps(math::vmath_detail::log<Fused>(x), std::log(xd)), x, worst_log, at_log);
    track(ulps(math::vmath_detail::tanh<Fused>(x), std::tanh(xd)), x, worst_tanh, at_tanh);
    track(ulps(math::vmath_detail::erf<Fused>(x), std::erf(xd)), x, worst_erf, at_erf);
  }
  EXPECT_LE(worst_exp, 1) << "exp at " << at_exp;
  EXPECT_LE(worst_log, 1) << "log at " << at_log;
  EXPECT_LE(worst_tanh, 1) << "tanh at " << at_tanh;
  EXPECT_LE(worst_erf, 2) << "erf at " << at_erf;
}

TEST(VectorMath, WithinTheirUlpBoundsAcrossFloat32) {
  // Both variants, whichever this build's math::exp is (without FMA
  // instructions, the fused one calls the C library's fmaf: exact, slower).
  expect_within_ulp_bounds<false>();
  expect_within_ulp_bounds<true>();
}

TEST(VectorMath, SpecialValuesAreTheCLibrarys) {
  const float values[] = {0.0f,    -0.0f,    kInf,    -kInf,  kNaN,  88.72f, 88.73f,  -87.3f,
                          -103.9f, -103.98f, -104.0f, -1e30f, 1e30f, 1e-40f, -1e-40f, 1.4e-45f,
                          -1.0f,   0.625f,   -0.625f, 9.0f,   -9.0f, 1e-20f, -1e-20f, 0.5f};
  for (float x : values) {
    SCOPED_TRACE(x);
    const float got[] = {math::exp(x), math::log(x), math::tanh(x), math::erf(x)};
    const float want[] = {std::exp(x), std::log(x), std::tanh(x), std::erf(x)};
    for (int k = 0; k < 4; ++k) {
      if (std::isnan(want[k])) {
        EXPECT_TRUE(std::isnan(got[k])) << "function " << k;
      } else if (std::isinf(want[k]) || want[k] == 0.0f) {
        EXPECT_EQ(to_bits(got[k]), to_bits(want[k])) << "function " << k;  // signed zeros too
      } else {
        EXPECT_LE(ulps(got[k], double(want[k])), 2) << "function " << k;
      }
    }
  }
}

TEST(VectorMath, VectorisedCodeGivesTheScalarBits) {
  // Long enough for the vector loop, an odd length for a scalar remainder.
  const int64_t n = 4099;
  ir::Module m = compile_tn(
      "def f(float(N) x) -> (e, l, t, s, r) {\n"
      "  e(i) = exp(x(i))\n"
      "  l(i) = log(x(i))\n"
      "  t(i) = tanh(x(i))\n"
      "  s(i) = sigmoid(x(i))\n"
      "  r(i) = erf(x(i))\n"
      "}\n");
  driver::optimise(m);
  jit::CompiledFunction f = driver::jit_compile(m, "f", test_jit_options());
  Tensor x(ElemType::F32, {n});
  const float special[] = {0.0f, -0.0f, kInf, -kInf, kNaN, 1e-40f, -104.0f, 89.0f};
  for (int64_t i = 0; i < n; ++i) {
    const double v = i < 8 ? double(special[i]) : std::ldexp(double(i % 97) - 48.0, -int(i % 7));
    x.set(i, v);
  }
  std::vector<Tensor> out = f.run({x}, {{"N", n}});
  ASSERT_EQ(out.size(), 5u);
  const float* in = static_cast<const float*>(x.raw());
  // The JIT builds for this machine (-march=native): fused multiply-adds
  // where it has FMA instructions.
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const bool fused = __builtin_cpu_supports("fma");
#else
  const bool fused = math::kFusedMath;
#endif
  auto exp = fused ? math::vmath_detail::exp<true> : math::vmath_detail::exp<false>;
  auto log = fused ? math::vmath_detail::log<true> : math::vmath_detail::log<false>;
  auto tanh = fused ? math::vmath_detail::tanh<true> : math::vmath_detail::tanh<false>;
  auto erf = fused ? math::vmath_detail::erf<true> : math::vmath_detail::erf<false>;
  for (int64_t i = 0; i < n; ++i) {
    const float want[] = {exp(in[i]), log(in[i]), tanh(in[i]), 1.0f / (1.0f + exp(-in[i])),
                          erf(in[i])};
    for (int k = 0; k < 5; ++k) {
      const float got = static_cast<const float*>(out[size_t(k)].raw())[i];
      ASSERT_EQ(to_bits(got), to_bits(want[k]))
          << "output " << k << " at x = " << in[i] << ": " << got << " vs " << want[k];
    }
  }
}

}  // namespace
}  // namespace tenet::codegen
