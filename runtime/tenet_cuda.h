/// \file
/// The device runtime of the CUDA target's host code (tenet::device is
/// tenet::cuda here; the grid emulator's tenet_emulator.h has the same
/// interface): kernel launches through the CUDA runtime, copies between
/// device buffers, GEMMs through cuBLAS, the workspace in device memory, the
/// device's record of an out-of-range computed index, and the caller's host
/// buffers copied to the device and back.
///
/// The kernels are in the unit's .cu, compiled by NVRTC for the GPU at hand
/// (cuda/nvrtc.h); the loader hands the cubin to <unit>__load_kernels (the
/// host source defines it) before any call, and a Kernel finds its function
/// in it by name. Every call runs on the legacy default stream, in order.
///
/// Expects: C++17, the CUDA toolkit's headers, linked with libcudart and
/// libcublas. Guarantees: a failed CUDA or cuBLAS call throws tenet::cuda::Error
/// naming the call; cuBLAS in its default math mode (no TF32: float32 GEMMs
/// are float32), on one stream, so the same GPU, driver and libraries give the
/// same bits.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "tenet_group.h"
#include "tenet_index.h"

// The unit whose host source includes this header (codegen: the unit's name
// as an identifier): its kernels' image is <unit>__kernels_image.
#ifndef TENET_CUDA_UNIT
#define TENET_CUDA_UNIT tenet
#endif
#define TENET_CUDA_CONCAT2(a, b) a##b
#define TENET_CUDA_CONCAT(a, b) TENET_CUDA_CONCAT2(a, b)
#define TENET_CUDA_KERNELS_IMAGE TENET_CUDA_CONCAT(TENET_CUDA_UNIT, __kernels_image)

/// An emitted project's kernels, embedded by its build (jit/aot_cuda.cpp);
/// undefined (null) where the loader hands them over instead.
extern "C" __attribute__((weak)) const unsigned char TENET_CUDA_KERNELS_IMAGE[];

namespace tenet::cuda {
// Everything here is the including unit's own (an unnamed namespace): two
// units linked into one program (two emitted projects, an extension's
// float32 and float64 units) keep their kernels, cuBLAS handles and images
// apart.
namespace {

/// A CUDA runtime or cuBLAS call that failed.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(status));
}

inline void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string(what) + ": cuBLAS status " + std::to_string(int(status)));
}

/// What one loaded unit holds: its kernels and its cuBLAS handle.
struct Unit {
  cudaLibrary_t kernels = nullptr;
  cublasHandle_t blas = nullptr;

  cublasHandle_t blas_handle() {
    if (!blas) {
      check(cublasCreate(&blas), "cublasCreate");
      check(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    }
    return blas;
  }
};

/// The including unit's kernels and cuBLAS handle (one per unit: this
/// header's names are the unit's own).
inline Unit& unit() {
  static Unit u;
  return u;
}

/// Loads the unit's kernels (a cubin or fatbin for this GPU) once, before any call.
inline void load_kernels(const void* cubin) {
  if (!unit().kernels)
    check(cudaLibraryLoadData(&unit().kernels, cubin, nullptr, nullptr, 0, nullptr, nullptr, 0),
          "loading the unit's kernels");
}

/// A kernel of the unit's .cu, found by name at its first launch.
class Kernel {
 public:
  explicit Kernel(const char* name) : name_(name) {}
  const char* name() const { return name_; }
  cudaKernel_t handle() {
    if (!handle_) {
      if (!unit().kernels && TENET_CUDA_KERNELS_IMAGE) load_kernels(TENET_CUDA_KERNELS_IMAGE);
      if (!unit().kernels) throw Error(std::string(name_) + ": the unit's kernels are not loaded");
      check(cudaLibraryGetKernel(&handle_, unit().kernels, name_), name_);
    }
    return handle_;
  }

 private:
  const char* name_;
  cudaKernel_t handle_ = nullptr;
};

/// Runs `kernel` for threads [0, threads) in blocks of `per_block`; its
/// parameters are `args`, in order, as the kernel declares them.
template <typename... Args>
void launch(Kernel& kernel, int64_t threads, int64_t per_block, const Args&... args) {
  if (threads <= 0) return;
  const int64_t blocks = (threads + per_block - 1) / per_block;
  if (blocks > INT_MAX) throw Error(std::string(kernel.name()) + ": more blocks than a grid holds");
  void* params[] = {const_cast<void*>(static_cast<const void*>(&args))..., nullptr};
  check(cudaLaunchKernel(reinterpret_cast<const void*>(kernel.handle()), dim3(unsigned(blocks)),
                         dim3(unsigned(per_block)), params, 0, nullptr),
        kernel.name());
}

/// A grouped kernel (lower/kernel_groups.h): launched as any other, its
/// threads in whole blocks (it has no early return: the group reduces).
template <typename... Args>
void launch_grouped(Kernel& kernel, int64_t threads, int64_t per_block, const Args&... args) {
  launch(kernel, threads, per_block, args...);
}

/// `count` elements from one device buffer to another.
template <typename T>
void copy(const T* from, int64_t count, T* to) {
  if (count > 0)
    check(cudaMemcpyAsync(to, from, size_t(count) * sizeof(T), cudaMemcpyDeviceToDevice, nullptr),
          "copying between device buffers");
}

/// cuBLAS' GEMM of each element type.
inline cublasStatus_t blas_gemm(cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                                int64_t k, const float* alpha, const float* a, int64_t lda,
                                const float* b, int64_t ldb, const float* beta, float* c,
                                int64_t ldc) {
  return cublasSgemm_64(unit().blas_handle(), ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline cublasStatus_t blas_gemm(cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                                int64_t k, const double* alpha, const double* a, int64_t lda,
                                const double* b, int64_t ldb, const double* beta, double* c,
                                int64_t ldc) {
  return cublasDgemm_64(unit().blas_handle(), ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/// tenet_gemm.h's interface (row-major C = alpha op(A) op(B) + beta C) on
/// cuBLAS, which is column-major: C^T = op(B)^T op(A)^T. Leading dimensions
/// of matrices with at most one row are raised to what BLAS requires.
template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  lda = std::max<int64_t>({lda, trans_a ? m : k, 1});
  ldb = std::max<int64_t>({ldb, trans_b ? k : n, 1});
  ldc = std::max<int64_t>({ldc, n, 1});
  check(blas_gemm(trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
                  &alpha, b, ldb, a, lda, &beta, c, ldc),
        "cuBLAS GEMM");
}

/// Device memory for the temporaries (cudaMalloc aligns to 256 bytes).
class Workspace {
 public:
  explicit Workspace(int64_t bytes) {
    if (bytes > 0) check(cudaMalloc(&data_, size_t(bytes)), "allocating the workspace");
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  ~Workspace() {
    if (data_) cudaFree(data_);
  }
  void* data() { return data_; }

 private:
  void* data_ = nullptr;
};

/// The device's record of the first out-of-range computed index
/// (tenet_cuda_device.h's IndexFault, the same layout).
struct DeviceFault {
  unsigned int claimed;
  int64_t value, extent;
};

class IndexFault {
 public:
  IndexFault() {
    check(cudaMalloc(&device_, sizeof(DeviceFault)), "allocating the index-fault record");
    check(cudaMemset(device_, 0, sizeof(DeviceFault)), "clearing the index-fault record");
  }
  IndexFault(const IndexFault&) = delete;
  IndexFault& operator=(const IndexFault&) = delete;
  ~IndexFault() { cudaFree(device_); }
  DeviceFault* on_device() const { return device_; }
  /// After the statement: throws IndexError when a kernel recorded a fault.
  void raise_if_failed() const {
    DeviceFault fault{};
    check(cudaMemcpy(&fault, device_, sizeof fault, cudaMemcpyDeviceToHost),
          "reading the index-fault record");
    if (fault.claimed)
      throw IndexError("a computed index is outside its dimension: " + std::to_string(fault.value) +
                       " is not in [0, " + std::to_string(fault.extent) +
                       ") (the cuda-emulated backend names the read and the indices)");
  }

 private:
  DeviceFault* device_ = nullptr;
};

/// How a caller's buffer is used: read, written, or both.
enum Mode { kIn, kOut, kInOut };

/// A caller's host buffer, copied to device memory (unless only written)
/// and back by copy_out().
template <typename T>
class Buffer {
 public:
  Buffer(T* host, int64_t count, Mode mode) : host_(host), bytes_(size_t(count) * sizeof(T)) {
    if (bytes_ == 0) return;
    check(cudaMalloc(&device_, bytes_), "allocating a buffer on the device");
    if (mode != kOut)
      check(cudaMemcpy(device_, host, bytes_, cudaMemcpyHostToDevice),
            "copying a buffer to the device");
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    if (device_) cudaFree(device_);
  }
  T* data() { return static_cast<T*>(device_); }
  void copy_out() {
    if (bytes_)
      check(cudaMemcpy(host_, device_, bytes_, cudaMemcpyDeviceToHost),
            "copying a buffer from the device");
  }

 private:
  T* host_;
  size_t bytes_;
  void* device_ = nullptr;
};

}  // namespace
}  // namespace tenet::cuda

namespace tenet {
namespace device = cuda;  // the device runtime the host code calls
}
