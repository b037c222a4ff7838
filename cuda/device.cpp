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

void* runtime() {
  static void* const handle = open_runtime();
  return handle;
}

/// A runtime entry point by name (the runtime is there: find_gpu() ran).
template <typename F>
F entry(const char* name) {
  auto f = reinterpret_cast<F>(dlsym(runtime(), name));
  if (!f) throw BindError(std::string("the CUDA runtime found lacks ") + name);
  return f;
}

void check(int status, const char* what) {
  if (status == 0) return;
  using Message = const char* (*)(int);
  throw BindError(std::string(what) + ": " + entry<Message>("cudaGetErrorString")(status));
}

constexpr int kHostToDevice = 1, kDeviceToHost = 2;  // cudaMemcpyKind

}  // namespace

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  find_gpu();
  using Malloc = int (*)(void**, size_t);
  if (bytes > 0) check(entry<Malloc>("cudaMalloc")(&data_, bytes), "cudaMalloc");
}

DeviceBuffer::~DeviceBuffer() {
  using Free = int (*)(void*);
  if (data_) entry<Free>("cudaFree")(data_);
}

void DeviceBuffer::upload(const void* host, size_t bytes) {
  using Copy = int (*)(void*, const void*, size_t, int);
  TENET_ASSERT(bytes <= bytes_, "an upload of " << bytes << " bytes into " << bytes_);
  if (bytes > 0) check(entry<Copy>("cudaMemcpy")(data_, host, bytes, kHostToDevice), "cudaMemcpy");
}

void DeviceBuffer::download(void* host, size_t bytes) const {
  using Copy = int (*)(void*, const void*, size_t, int);
  TENET_ASSERT(bytes <= bytes_, "a download of " << bytes << " bytes from " << bytes_);
  if (bytes > 0) check(entry<Copy>("cudaMemcpy")(host, data_, bytes, kDeviceToHost), "cudaMemcpy");
}

Gpu find_gpu() {
  void* const handle = runtime();
  if (!handle)
    throw UsageError(std::string("the cuda target needs the CUDA runtime (libcudart, part of the "
                                 "CUDA toolkit), which is not installed here; set CUDA_HOME") +
                     kWithoutGpu);
  using Count = int (*)(int*);
  using Attribute = int (*)(int*, int, int);
  using Message = const char* (*)(int);
  auto count = reinterpret_cast<Count>(dlsym(handle, "cudaGetDeviceCount"));
  auto attribute = reinterpret_cast<Attribute>(dlsym(handle, "cudaDeviceGetAttribute"));
  auto message = reinterpret_cast<Message>(dlsym(handle, "cudaGetErrorString"));
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
