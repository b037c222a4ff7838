// How tenet::gemm cuts a product into tiles and slices (runtime/tenet_gemm.h,
// gemm_grid): the limits hold for every shape of a sweep, the cut depends on
// the shape and the machine's cores alone, and the model picks the cuts
// measured fastest for the shapes that decide CapsNet's training step. That
// the bits do not depend on the thread count is checked end to end by
// GradCli.GemmResultsAreTheSameAtAnyThreadCount.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "runtime/tenet_gemm.h"  // built without OpenMP (tests/CMakeLists.txt)

namespace tenet::codegen {
namespace {

using gemm_detail::gemm_grid;
using gemm_detail::GemmGrid;

bool power_of_two(int64_t v) {
  return v > 0 && (v & (v - 1)) == 0;
}

TEST(GemmGrid, EveryCutKeepsItsLimits) {
  const int64_t extents[] = {1, 7, 64, 100, 257, 1024, 3600, 20736};
  for (int64_t m : extents)
    for (int64_t n : extents)
      for (int64_t k : extents)
        for (int variant = 0; variant < 12; ++variant) {
          const bool ta = variant & 1, tb = variant & 2;
          const int64_t pieces = int64_t(8) << (variant / 4 * 2);  // 8, 32, 128
          const GemmGrid g = gemm_grid(ta, tb, m, n, k, sizeof(float), pieces);
          SCOPED_TRACE(testing::Message() << m << " x " << n << " x " << k << " ta " << ta << " tb "
                                          << tb << " pieces " << pieces << ": " << g.rows << " x "
                                          << g.cols << " x " << g.slices);
          EXPECT_TRUE(power_of_two(g.tiles()));
          EXPECT_LE(g.tiles(), pieces);
          EXPECT_TRUE(g.tiles() == 1 ||
                      2 * m * n * k / g.tiles() >= gemm_detail::least_tile_flops(pieces));
          EXPECT_TRUE(g.rows == 1 || m / g.rows >= gemm_detail::kLeastTileRows);
          EXPECT_TRUE(g.cols == 1 || n / g.cols >= gemm_detail::kLeastTileCols);
          EXPECT_TRUE(g.slices == 1 || k / g.slices >= gemm_detail::kLeastTileDepth);
          EXPECT_LE((g.slices - 1) * m * n * 4, gemm_detail::kMostPartialBytes);
        }
}

TEST(GemmGrid, LargeProductsGetTheMostTiles) {
  for (int64_t pieces : {8, 16, 32, 64})
    EXPECT_EQ(gemm_grid(false, false, 2048, 2048, 2048, sizeof(float), pieces).tiles(), pieces);
  EXPECT_EQ(gemm_grid(false, false, 64, 64, 64, sizeof(float), 64).tiles(), 1);  // 0.5 MFLOP
  // The MNIST CNN's first dense layer (64 x 128 x 9216, 151 MFLOP): 8 tiles
  // of 16 MFLOP or more on a small machine, 32 of 4 MFLOP on a 16-core one.
  EXPECT_EQ(gemm_grid(false, true, 64, 128, 9216, 4, 8).tiles(), 8);
  EXPECT_EQ(gemm_grid(false, true, 64, 128, 9216, 4, 32).tiles(), 32);
}

TEST(GemmGrid, PiecesFollowTheMachinesCores) {
  EXPECT_TRUE(power_of_two(parallel_pieces()));
  EXPECT_GE(parallel_pieces(), 8);
  EXPECT_LE(parallel_pieces(), 64);
  EXPECT_GE(parallel_pieces(), std::min<int64_t>(64, 2 * parallel_cores()));
}

// The shapes of CapsNet's PrimaryCaps convolution in its training step
// (chunks of 10 images and 28 channels): the model cuts them the ways
// measured cheapest on one thread (docs/performance.md).
TEST(GemmGrid, CapsNetsConvolutionsAreCutWhereTheyAreCheap) {
  // The weight gradient, 256 x 2268 summed over 3600 terms: slices of the sum
  // (a block of columns would copy B's columns: 9% slower in 8 tiles).
  EXPECT_GT(gemm_grid(false, false, 256, 2268, 3600, 4, 8).slices, 1);
  EXPECT_EQ(gemm_grid(false, false, 256, 2268, 3600, 4, 8).cols, 1);
  // The input gradient, 3600 x 2268 over 256 terms: rows (A's rows are
  // dense; 32 row blocks cost 0%, 4 x 8 tiles 13%).
  EXPECT_EQ(gemm_grid(false, false, 3600, 2268, 256, 4, 8).rows, 8);
  EXPECT_EQ(gemm_grid(false, false, 3600, 2268, 256, 4, 32).rows, 32);
  // The forward, 360 x 256 over 20736 terms: 32 and 64 slices of the sum.
  EXPECT_EQ(gemm_grid(false, true, 360, 256, 20736, 4, 64).slices, 64);
}

}  // namespace
}  // namespace tenet::codegen
