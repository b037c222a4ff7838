// float16 storage (runtime/tenet_runtime.h): half_to_float is exact and
// float_to_half rounds to nearest, ties to even, like IEEE 754 conversion;
// generated code and the interpreter both call these two functions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "runtime/tenet_runtime.h"

namespace tenet {
namespace {

uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

TEST(Half, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = half_to_float(uint16_t(h));
    if (std::isnan(f)) {
      EXPECT_EQ(h & 0x7c00u, 0x7c00u) << h;
      EXPECT_TRUE(std::isnan(half_to_float(float_to_half(f)))) << h;
      continue;
    }
    EXPECT_EQ(float_to_half(f), h) << "half " << h << " = " << f;
  }
}

TEST(Half, KnownValues) {
  EXPECT_EQ(half_to_float(0x3c00), 1.0f);
  EXPECT_EQ(half_to_float(0xc000), -2.0f);
  EXPECT_EQ(half_to_float(0x7bff), 65504.0f);               // the largest finite half
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));  // the smallest subnormal
  EXPECT_EQ(half_to_float(0x0400), std::ldexp(1.0f, -14));  // the smallest normal
  EXPECT_EQ(half_to_float(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(bits(half_to_float(0x8000)), 0x80000000u);  // -0
  EXPECT_EQ(float_to_half(0.1f), 0x2e66);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(65519.0f), 0x7bff);  // below the midpoint to infinity
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);  // the midpoint: ties to even is infinity
  EXPECT_EQ(float_to_half(1e10f), 0x7c00);
  EXPECT_EQ(float_to_half(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);  // half the smallest: even 0
  EXPECT_EQ(float_to_half(std::ldexp(1.5f, -25)), 0x0001);  // above the tie
  EXPECT_EQ(float_to_half(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 steps: tie to even 2
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -26)), 0x0400);  // up to normal
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::nanf("")))));
}

TEST(Half, TiesGoToEven) {
  // Between 1 (0x3c00) and its successor 1 + 2^-10: the midpoint goes to the
  // even 1, the next midpoint up to the even 1 + 2^-9.
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
}

#if defined(__FLT16_MAX__)
// Against the compiler's own conversion (_Float16), on every 1021st float bit pattern.
TEST(Half, AgreesWithTheCompilersFloat16) {
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 1021) {
    float f;
    const uint32_t b = uint32_t(u);
    std::memcpy(&f, &b, sizeof f);
    if (std::isnan(f)) continue;
    const _Float16 h = static_cast<_Float16>(f);
    uint16_t want;
    std::memcpy(&want, &h, sizeof want);
    ASSERT_EQ(float_to_half(f), want) << "float bits " << b;
  }
}
#endif

}  // namespace
}  // namespace tenet
