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

}  // namespace tenet::cuda
