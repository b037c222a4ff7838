/// \file
/// The GPU the `cuda` target runs on: found through the CUDA runtime, opened
/// with dlopen (libcudart from $CUDA_HOME/lib64, else /usr/local/cuda/lib64,
/// else the loader's path), so that Tenet needs no CUDA library to build or
/// to run its CPU targets.
///
/// Guarantees: no GPU, no driver or no CUDA runtime is a UsageError saying
/// which and how to run the same kernels without one (`--backend
/// cuda-emulated`), never a crash.
#pragma once

#include <cstddef>
#include <string>

namespace tenet::cuda {

struct Gpu {
  int device = 0;
  int major = 0, minor = 0;  // compute capability
  /// NVRTC's name of its architecture: "sm_90".
  std::string arch() const { return "sm_" + std::to_string(major * 10 + minor); }
};

/// Device 0, or a UsageError saying why there is none.
Gpu find_gpu();

/// Memory on device 0 (through the same dlopen'ed runtime): what a caller
/// hands to a GPU target's device-resident entry point
/// (jit::CompiledFunction::run_on_device). A failed call is a BindError
/// naming it; find_gpu() first says why there is no GPU.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes);
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  /// Copies `bytes` (at most bytes()) from host memory, and back to it;
  /// both wait for the device's work queued before them.
  void upload(const void* host, size_t bytes);
  void download(void* host, size_t bytes) const;

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace tenet::cuda
