// The runtime's element-wise float max and min (runtime/tenet_runtime.h,
// tenet::math), which generated code calls for max(a, b) and min(a, b) and
// to combine the terms of max= and min= reductions, agree
// with fmax and fmin (the interpreter's semantics) on every pair of NaN,
// infinities, signed zeros and finite values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime/tenet_runtime.h"

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(MathMinMax, MaxAndMinIgnoreNaNLikeFmaxAndFmin) {
  const float values[] = {kNaN, -kInf, -1.0f, -0.0f, 0.0f, 2.5f, kInf};
  for (float a : values) {
    for (float b : values) {
      const float max = tenet::math::max(a, b), min = tenet::math::min(a, b);
      const float want_max = std::fmax(a, b), want_min = std::fmin(a, b);
      EXPECT_EQ(std::isnan(max), std::isnan(want_max)) << a << ", " << b;
      EXPECT_EQ(std::isnan(min), std::isnan(want_min)) << a << ", " << b;
      if (!std::isnan(want_max)) {
        EXPECT_EQ(max, want_max) << a << ", " << b;
      }
      if (!std::isnan(want_min)) {
        EXPECT_EQ(min, want_min) << a << ", " << b;
      }
    }
  }
}

}  // namespace
