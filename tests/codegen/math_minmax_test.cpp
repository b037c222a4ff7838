// The runtime's element-wise float max and min (runtime/tenet_runtime.h,
// tenet::math), which generated code calls for max(a, b) and min(a, b) and
// to combine the terms of max= and min= reductions, agree
// with fmax and fmin (the interpreter's semantics) on every pair of NaN,
// infinities, signed zeros and finite values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
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

// The folds of vector lanes generated code calls once per row (fold_lanes for
// max and min, sum_lanes for float32 sums in double) give the bits of the
// scalar reference: any order for max and min (signed zeros included), the
// halving order of sum_lanes_in_place for sums (magnitudes 1e-8 to 1e8, so
// any other order rounds differently).
template <int N>
void expect_folds_like_the_reference(uint32_t seed) {
  uint32_t state = seed;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  for (int round = 0; round < 200; ++round) {
    float f[N];
    double d[N], copy[N];
    for (int k = 0; k < N; ++k) {
      const int pick = int(next() % 8);
      f[k] = pick == 0 ? 0.0f : pick == 1 ? -0.0f : (float(next() % 2001) - 1000.0f) / 7.0f;
      d[k] = (double(next() % 2001) - 1000.0) * std::pow(10.0, double(next() % 17) - 8.0);
      copy[k] = d[k];
    }
    float max = f[0], min = f[0];
    for (int k = 1; k < N; ++k) {
      max = tenet::math::max(max, f[k]);
      min = tenet::math::min(min, f[k]);
    }
    const float folded_max = tenet::fold_lanes<true, N>(f),
                folded_min = tenet::fold_lanes<false, N>(f);
    EXPECT_EQ(std::signbit(folded_max), std::signbit(max));
    EXPECT_EQ(folded_max, max);
    EXPECT_EQ(std::signbit(folded_min), std::signbit(min));
    EXPECT_EQ(folded_min, min);
    const double want = tenet::sum_lanes_in_place(copy, N), got = tenet::sum_lanes<N>(d);
    EXPECT_EQ(std::memcmp(&got, &want, sizeof got), 0) << got << " vs " << want;
  }
}

TEST(MathMinMax, LaneFoldsGiveTheBitsOfTheScalarReference) {
  expect_folds_like_the_reference<16>(1);
  expect_folds_like_the_reference<8>(2);
  expect_folds_like_the_reference<4>(3);
  expect_folds_like_the_reference<2>(4);
}

}  // namespace
