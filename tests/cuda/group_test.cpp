// Grouped reduction kernels (lower/kernel_groups.h, runtime/tenet_group.h):
// the tree the emulator computes is, bit for bit, what the first lane of
// each group gets from tenet_cuda_device.h's shuffles (simulated here in
// lockstep, as a warp runs them); the rule for lanes; and long reductions
// (a scalar sum, a bias gradient's column sum, a row max, an integer count)
// mapped to groups of 8 to 256 lanes and run on the emulator against the
// interpreter, next to a short one that keeps a thread per element.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "driver/driver.h"
#include "ir/interp.h"
#include "lower/loops.h"
#include "runtime/tenet_group.h"
#include "tests/cuda/cuda_zoo.h"
#include "tests/zoo/zoo_util.h"

namespace tenet::cuda::testing {
namespace {

/// tenet_cuda_device.h's group_reduce, run by a block of `values.size()`
/// threads in lockstep: __shfl_down_sync gives lane i + offset's value (its
/// own past the warp's end), read before any lane writes. Returns every
/// thread's result.
template <Combine C, typename T>
std::vector<T> simulate_shuffles(std::vector<T> v, int64_t lanes) {
  const int64_t threads = int64_t(v.size());
  auto shuffle_round = [&](std::vector<T>& x, int64_t offset, auto active) {
    const std::vector<T> before = x;
    for (int64_t t = 0; t < threads; ++t) {
      if (!active(t)) continue;
      const bool inside = t % kWarpLanes + offset < kWarpLanes;
      x[size_t(t)] = combine<C>(before[size_t(t)], before[size_t(inside ? t + offset : t)]);
    }
  };
  const int64_t width = std::min(lanes, kWarpLanes);
  for (int64_t offset = width / 2; offset > 0; offset /= 2)
    shuffle_round(v, offset, [](int64_t) { return true; });
  if (lanes <= kWarpLanes) return v;
  std::vector<T> warp_values(size_t(threads / kWarpLanes));
  for (int64_t t = 0; t < threads; t += kWarpLanes)
    warp_values[size_t(t / kWarpLanes)] = v[size_t(t)];
  const int64_t warps = lanes / kWarpLanes;
  auto first_warp = [&](int64_t t) { return t % lanes < kWarpLanes; };
  std::vector<T> w = v;
  for (int64_t t = 0; t < threads; ++t)
    if (first_warp(t) && t % kWarpLanes < warps)
      w[size_t(t)] = warp_values[size_t(t / kWarpLanes + t % kWarpLanes)];
  for (int64_t offset = warps / 2; offset > 0; offset /= 2) shuffle_round(w, offset, first_warp);
  for (int64_t t = 0; t < threads; ++t)
    if (first_warp(t)) v[size_t(t)] = w[size_t(t)];
  return v;
}

template <Combine C, typename T>
void expect_tree_is_shuffles(const std::vector<T>& values) {
  for (int64_t lanes = 1; lanes <= kMaxGroupLanes; lanes *= 2) {
    const std::vector<T> lanes_end = simulate_shuffles<C>(values, lanes);
    for (size_t group = 0; group < values.size(); group += size_t(lanes)) {
      std::vector<T> v(values.begin() + long(group), values.begin() + long(group) + lanes);
      const T tree = group_tree<C>(v.data(), lanes);
      EXPECT_EQ(std::memcmp(&tree, &lanes_end[group], sizeof(T)), 0)
          << "lanes " << lanes << ", group at " << group << ": " << tree << " vs "
          << lanes_end[group];
    }
  }
}

TEST(GroupTree, IsWhatEachGroupsFirstLaneGetsFromTheShuffles) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(-1, 1);
  std::uniform_int_distribution<int> exponent(-20, 20);
  std::vector<float> f(256);
  std::vector<double> d(256);
  std::vector<int64_t> n(256);
  for (size_t i = 0; i < 256; ++i) {  // magnitudes far apart: every order rounds differently
    d[i] = std::ldexp(mantissa(rng), exponent(rng));
    f[i] = float(d[i]);
    n[i] = int64_t(rng() % 2001) - 1000;
  }
  expect_tree_is_shuffles<Combine::Sum>(f);
  expect_tree_is_shuffles<Combine::Sum>(d);
  expect_tree_is_shuffles<Combine::Max>(f);
  expect_tree_is_shuffles<Combine::Min>(d);
  expect_tree_is_shuffles<Combine::Prod>(d);
  expect_tree_is_shuffles<Combine::Sum>(n);
  expect_tree_is_shuffles<Combine::Max>(n);
}

// More lanes for few long reductions, one thread each for many short ones,
// powers of two within a block, every lane with 8 terms or more.
TEST(GroupLanes, FollowTheShape) {
  EXPECT_EQ(group_lanes(1, 100000), kMaxGroupLanes);
  EXPECT_EQ(group_lanes(1, 7), 1);
  EXPECT_EQ(group_lanes(1 << 20, 100000), 1);
  EXPECT_EQ(group_lanes(300, 100), 8);
  for (int64_t elements : {1, 5, 300, 4096, 1 << 16})
    for (int64_t length : {0, 1, 15, 16, 100, 969, 100003}) {
      const int64_t lanes = group_lanes(elements, length);
      EXPECT_EQ(lanes & (lanes - 1), 0) << lanes;
      EXPECT_LE(lanes, kMaxGroupLanes);
      if (lanes > 1) {
        EXPECT_GE(length / lanes, 8) << elements << " x " << length;
        EXPECT_LE(elements * lanes, int64_t(1) << 17);
      }
    }
}

constexpr const char* kSums = R"(
def sums(float(N) x, float(B, C, H, W) dy, float(R, K) z, int32(R, K) counts,
         float(R, 8) s) -> (total, bias, peak, count, small) {
  total +=! x(i)
  bias(c) +=! dy(b, c, h, w)
  peak(r) max=! z(r, k)
  count(r) +=! counts(r, k)
  small(r) +=! s(r, j)
}
)";

driver::Request sums_request(const std::string& stop_after) {
  driver::Request r;
  r.path = "sums.tn";
  r.text = kSums;
  r.target = "cuda-emulated";
  r.functions.push_back({"sums", std::nullopt});
  r.stop_after = stop_after;
  return r;
}

TEST(GroupedKernels, LongReductionsAreGroupedShortOnesAreNot) {
  const driver::Compilation c = driver::compile(sums_request("map_kernels"));
  const std::string tree =
      lower::print(c.lowered->functions.at(0).loops, *c.lowered->functions[0].function);
  size_t grouped = 0;
  for (size_t at = 0; (at = tree.find("grouped over", at)) != std::string::npos; ++at) ++grouped;
  EXPECT_EQ(grouped, 4u) << tree;
  // The bias gradient's three reduce loops share one iteration index.
  EXPECT_NE(tree.find("lanes / (H * W)"), std::string::npos) << tree;
  const size_t small = tree.find("statement small");
  ASSERT_NE(small, std::string::npos) << tree;
  EXPECT_EQ(tree.find("grouped", small), std::string::npos) << tree;  // 8 terms: a thread each
}

// Device code outside any parallel loop runs on one thread; a reduction there
// (a scalar loss) gets a grouped kernel of its own instead of sharing that
// thread's kernel with its neighbours.
TEST(GroupedKernels, ScalarReductionsGetKernelsOfTheirOwn) {
  driver::Request r;
  r.path = std::string(TENET_SOURCE_DIR) + "/models/zoo/scalar_loss.tn";
  r.target = "cuda";
  r.functions.push_back({"scalar_loss", std::nullopt});
  r.stop_after = "map_kernels";
  const driver::Compilation c = driver::compile(r);
  const std::string tree =
      lower::print(c.lowered->functions.at(0).loops, *c.lowered->functions[0].function);
  size_t kernels = 0, grouped = 0;
  for (size_t at = 0; (at = tree.find("kernel ", at)) != std::string::npos; ++at) ++kernels;
  for (size_t at = 0; (at = tree.find("grouped over", at)) != std::string::npos; ++at) ++grouped;
  EXPECT_EQ(kernels, 3u) << tree;  // data_term, penalty, then loss = data_term + lambda penalty
  EXPECT_EQ(grouped, 2u) << tree;
}

TEST(GroupedKernels, MatchTheInterpreterOnTheEmulator) {
  const driver::Request request = sums_request("");
  const driver::Compilation c = driver::compile(request);
  std::vector<jit::CompiledFunction> compiled = driver::load(request, c, zoo::test_jit_options());
  ASSERT_EQ(compiled.size(), 1u);
  const ir::Function* fn = c.checked->find("sums");
  ASSERT_NE(fn, nullptr);
  // Lanes: total 256 (one element, 100,003 terms), bias 64 (5 x 969: two
  // warps per group), peak and count 8 (300 rows of 100: 2,400 threads, not
  // a whole number of blocks).
  const ir::SizeBindings sizes{{"N", 100003}, {"B", 3},   {"C", 5},  {"H", 17},
                               {"W", 19},     {"R", 300}, {"K", 100}};
  EXPECT_EQ(group_lanes(1, 100003), 256);
  EXPECT_EQ(group_lanes(5, 3 * 17 * 19), 64);
  EXPECT_EQ(group_lanes(300, 100), 8);
  const std::vector<Tensor> inputs = zoo::make_inputs(*fn, sizes, 11, {}, 1000);
  const std::vector<Tensor> expected = ir::interpret(*fn, inputs);
  const std::vector<Tensor> actual = compiled[0].run(inputs);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_LE(zoo::max_rel_to_peak(actual[i], expected[i]), 1e-6) << fn->output_names[i];
  // A max and an integer sum are exact in any order.
  EXPECT_EQ(zoo::max_rel_to_peak(actual[2], expected[2]), 0.0);
  EXPECT_EQ(zoo::max_rel_to_peak(actual[3], expected[3]), 0.0);
}

}  // namespace
}  // namespace tenet::cuda::testing
