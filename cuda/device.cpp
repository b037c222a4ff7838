// The GPU, through a dlopen'ed CUDA runtime (device.h): the three entry
// points Tenet calls before loading a unit, with their C signatures.
#include "cuda/device.h"

#include <dlfcn.h>

#include <cstdlib>

#include "support/error.h"

namespace tenet::cuda {

namespace {

constexpr int kComputeCapabilityMajor = 75;  // cudaDevAttrComputeCapabilityMajor
constexpr int kComputeCapabilityMinor = 76;  // cudaDevAttrComputeCapabilityMinor

const char* const kWithoutGpu =
    " (`--backend cuda-emulated`, target=\"cuda-emulated\", runs the same kernels on the CPU)";

void* open_runtime() {
  const char* env = std::getenv("CUDA_HOME");
  const std::string home = env && *env ? env : "/usr/local/cuda";
  for (const std::string& name : {home + "/lib64/libcudart.so.13", home + "/lib64/libcudart.so",
                                  std::string("libcudart.so.13"), std::string("libcudart.so.12"),
                                  std::string("libcudart.so")})
    if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  return nullptr;
}

}  // namespace

Gpu find_gpu() {
  static void* const runtime = open_runtime();
  if (!runtime)
    throw UsageError(std::string("the cuda target needs the CUDA runtime (libcudart, part of the "
                                 "CUDA toolkit), which is not installed here; set CUDA_HOME") +
                     kWithoutGpu);
  using Count = int (*)(int*);
  using Attribute = int (*)(int*, int, int);
  using Message = const char* (*)(int);
  auto count = reinterpret_cast<Count>(dlsym(runtime, "cudaGetDeviceCount"));
  auto attribute = reinterpret_cast<Attribute>(dlsym(runtime, "cudaDeviceGetAttribute"));
  auto message = reinterpret_cast<Message>(dlsym(runtime, "cudaGetErrorString"));
  if (!count || !attribute || !message)
    throw UsageError(std::string("the CUDA runtime found lacks cudaGetDeviceCount") + kWithoutGpu);
  int devices = 0;
  if (int status = count(&devices); status != 0)
    throw UsageError(std::string("no CUDA GPU here: ") + message(status) + kWithoutGpu);
  if (devices == 0) throw UsageError(std::string("no CUDA GPU here") + kWithoutGpu);
  Gpu gpu;
  if (attribute(&gpu.major, kComputeCapabilityMajor, gpu.device) != 0 ||
      attribute(&gpu.minor, kComputeCapabilityMinor, gpu.device) != 0)
    throw UsageError(std::string("cannot read the GPU's compute capability") + kWithoutGpu);
  return gpu;
}

}  // namespace tenet::cuda
