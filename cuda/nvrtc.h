/// \file
/// NVRTC, the CUDA runtime compiler: the CUDA target's kernels (codegen's
/// Kernels::Cuda source, including runtime/tenet_cuda_device.h) compiled to
/// a cubin for one GPU architecture, with ptxas' account of each kernel's
/// resources (registers, spills, stack, shared memory), which the tests
/// check and a loader can report.
///
/// NVRTC is opened at run time (dlopen of libnvrtc from the CUDA toolkit:
/// $TENET_NVRTC_LIBRARY, else libnvrtc.so.13, .so.12, .so, also under
/// $CUDA_HOME/lib64 and /usr/local/cuda/lib64), so Tenet builds and runs
/// its CPU targets without a CUDA toolkit; the toolkit's headers are found
/// under $CUDA_HOME/include, else /usr/local/cuda/include.
///
/// Expects: a source whose runtime headers are in jit::runtime_dir().
/// Guarantees: no fast-math (--fmad=false: the kernels' arithmetic is the
/// source's, as the host's -ffp-contract=off); a failed compilation is a
/// BindError with NVRTC's log; NVRTC missing is a BindError saying what to
/// install.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tenet::cuda {

/// What ptxas reported for one kernel.
struct KernelResources {
  std::string name;
  int registers = 0;
  int64_t stack_bytes = 0, spill_store_bytes = 0, spill_load_bytes = 0, shared_bytes = 0;
};

struct DeviceCode {
  std::string arch;   // "sm_90"
  std::string cubin;  // the machine code, for cuModuleLoadData
  std::string log;    // NVRTC's and ptxas' messages
  std::vector<KernelResources> kernels;
};

/// Whether NVRTC can be opened (else why not in `why`).
bool nvrtc_available(std::string* why = nullptr);

/// Compiles `source` (named `name` in messages) for `arch` ("sm_90", "sm_80").
DeviceCode compile_kernels(const std::string& source, const std::string& name,
                           const std::string& arch);

/// The resources of each kernel in a ptxas -v log (parse_ptxas_log("...")).
std::vector<KernelResources> parse_ptxas_log(const std::string& log);

}  // namespace tenet::cuda
