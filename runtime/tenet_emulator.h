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
/// The host code around the kernels is the CUDA target's too: it calls the
/// device runtime as tenet::device (this header's tenet::emu here,
/// tenet_cuda.h's tenet::cuda on a GPU), for launches, copies between
/// buffers, GEMMs, the workspace, the record of an out-of-range computed
/// index and the caller's buffers, which it copies in and out as it would
/// to a GPU (an output's copy starts as NaN bytes, so that an element the
/// code never writes shows).
///
/// Expects: C++17, the kernels of one generated unit; included after
/// tenet_gemm.h when the unit calls GEMMs. Guarantees: a launch of zero
/// threads runs nothing; every thread index below `threads` runs once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

#include "tenet_group.h"
#include "tenet_index.h"
#include "tenet_runtime.h"

namespace tenet::emu {

/// CUDA's dim3, as the emulated kernels read it (only x is used).
struct Dim3 {
  int64_t x = 0, y = 0, z = 0;
};

/// Runs `kernel` for every thread of blocks of `per_block` that cover
/// [0, threads): blocks on the OpenMP team, a block's threads one after
/// another, the last one first when `last_first`.
template <typename Kernel, typename... Args>
void run_blocks(bool last_first, Kernel kernel, int64_t threads, int64_t per_block,
                Args&&... args) {
  if (threads <= 0) return;
  const int64_t blocks = (threads + per_block - 1) / per_block;
  const Dim3 block_dim{per_block, 1, 1};
#pragma omp parallel for schedule(static) if (blocks > 1)
  for (int64_t block = 0; block < blocks; ++block)
    for (int64_t k = 0; k < per_block; ++k) {
      const int64_t thread = last_first ? per_block - 1 - k : k;
      kernel(Dim3{block, 0, 0}, block_dim, Dim3{thread, 0, 0}, args...);
    }
}

/// Runs `kernel` for threads [0, threads) in blocks of `per_block`.
template <typename Kernel, typename... Args>
void launch(Kernel kernel, int64_t threads, int64_t per_block, Args&&... args) {
  run_blocks(false, kernel, threads, per_block, args...);
}

/// The lanes' values of the block a thread of the team runs (launch_grouped).
inline unsigned char* lane_values() {
  alignas(8) static thread_local unsigned char values[kMaxGroupLanes * 4 * 8];  // 1024 threads
  return values;
}

/// Runs a grouped kernel (lower/kernel_groups.h) for threads [0, threads) in
/// blocks of `per_block`: every thread of each block, the last one first, so
/// that when a group's first lane reaches group_reduce the other lanes have
/// left their values there.
template <typename Kernel, typename... Args>
void launch_grouped(Kernel kernel, int64_t threads, int64_t per_block, Args&&... args) {
  run_blocks(true, kernel, threads, per_block, args...);
}

/// `count` elements from one device buffer to another.
template <typename T>
void copy(const T* from, int64_t count, T* to) {
  std::copy_n(from, count, to);
}

#ifdef TENET_GEMM_H
/// tenet_gemm.h's GEMM (a GPU's is cuBLAS').
template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  ::tenet::gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
#endif

using Workspace = ::tenet::Workspace;

/// The record of an out-of-range computed index, where kernels write it.
struct IndexFault : ::tenet::IndexFault {
  ::tenet::IndexFault& on_device() { return *this; }
};

/// How a caller's buffer is used: read, written, or both.
enum Mode { kIn, kOut, kInOut };

/// A caller's buffer in the device's memory (here: a copy in host memory).
template <typename T>
class Buffer {
 public:
  Buffer(T* host, int64_t count, Mode mode)
      : host_(host), count_(count), copy_(new T[size_t(count > 0 ? count : 1)]) {
    if (mode == kOut)
      std::memset(static_cast<void*>(copy_.get()), 0xff, size_t(count) * sizeof(T));
    else
      std::copy_n(host, count, copy_.get());
  }
  T* data() { return copy_.get(); }
  void copy_out() { std::copy_n(copy_.get(), count_, host_); }

 private:
  T* host_;
  int64_t count_;
  std::unique_ptr<T[]> copy_;
};

}  // namespace tenet::emu

namespace tenet {
namespace device = emu;  // the device runtime the host code calls

/// tenet_cuda_device.h's group reduction, emulated: each lane leaves its
/// value in the block's lane array; the group's first lane, which runs last
/// (launch_grouped), combines them by group_tree, the shuffles' tree.
template <Combine C, typename T>
T group_reduce(T v, int64_t thread, int64_t lanes) {
  unsigned char* values = emu::lane_values();
  std::memcpy(values + thread * int64_t(sizeof(T)), &v, sizeof(T));
  if (thread % lanes != 0) return v;
  T group[kMaxGroupLanes];
  std::memcpy(group, values + thread * int64_t(sizeof(T)), size_t(lanes) * sizeof(T));
  return group_tree<C>(group, lanes);
}

}  // namespace tenet
