/// \file
/// The grid emulator: runs the kernels of a GPU target (lower/kernels.h) on
/// the CPU, for the `cuda-emulated` target (docs/cuda.md). A kernel is
/// printed as the same text the CUDA target prints, as a C++ function that
/// takes its thread's blockIdx, blockDim and threadIdx first; launch() runs
/// it for every thread of the grid. Blocks run on the OpenMP team, threads
/// of a block one after another: a kernel's threads write disjoint elements
/// and read nothing another thread of the launch writes (what map_kernels
/// guarantees), so the order does not change a bit of the result.
///
/// Expects: C++17, the kernels of one generated unit. Guarantees: a launch
/// of zero threads runs nothing; every thread index below `threads` runs
/// once.
#pragma once

#include <cstdint>

namespace tenet::emu {

/// CUDA's dim3, as the emulated kernels read it (only x is used).
struct Dim3 {
  int64_t x = 0, y = 0, z = 0;
};

/// Runs `kernel` for threads [0, threads) in blocks of `per_block`.
template <typename Kernel, typename... Args>
void launch(Kernel kernel, int64_t threads, int64_t per_block, Args&&... args) {
  if (threads <= 0) return;
  const int64_t blocks = (threads + per_block - 1) / per_block;
  const Dim3 block_dim{per_block, 1, 1};
#pragma omp parallel for schedule(static) if (blocks > 1)
  for (int64_t block = 0; block < blocks; ++block)
    for (int64_t thread = 0; thread < per_block; ++thread)
      kernel(Dim3{block, 0, 0}, block_dim, Dim3{thread, 0, 0}, args...);
}

}  // namespace tenet::emu
