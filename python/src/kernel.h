/// \file
/// A JIT-compiled function as the Python module runs it: many calls, each on
/// caller-owned input buffers, without copying them.
///
/// Expects: a CompiledFunction (after the pipeline) and, per call, one dense
/// row-major buffer per input with its element type and shape. Guarantees:
///   - the first call with a set of input types and shapes (and given sizes)
///     binds the sizes
///     with ir::bind_sizes (a BindError names the input, the expected shape
///     with the size values and the actual one) and keeps a
///     jit::Executable for them: the planned workspace, allocated once;
///   - later calls with the same types and shapes reuse it: the inputs are
///     read in place and only the outputs are allocated;
///   - calls are serialised by a mutex (an Executable is not thread-safe), so
///     several Python threads may share a Kernel; at most kMaxBound sets of
///     shapes stay bound (all are dropped when another one comes).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "jit/executable.h"
#include "jit/jit.h"
#include "python/src/program.h"
#include "support/tensor.h"

namespace tenet::python {

/// One input buffer, owned by the caller for the duration of the call.
struct RawInput {
  ElemType type;
  std::vector<int64_t> shape;
  const void* data;
};

class Kernel {
 public:
  static constexpr size_t kMaxBound = 8;

  Kernel(jit::CompiledFunction compiled, FunctionInfo info);

  /// Runs on one buffer per input; returns one new tensor per output. With
  /// `pack_from` below the number of outputs, the outputs from that one on
  /// share one new uint8 tensor, the last returned (packed_layout: what a
  /// forward saves for its backward, one buffer instead of hundreds).
  std::vector<Tensor> run(const std::vector<RawInput>& inputs, const ir::SizeBindings& given,
                          size_t pack_from = SIZE_MAX);
  /// Runs with the inputs at positions `slots` (ascending) read from `packed`, a
  /// buffer that run(..., pack_from) returned with those values in that order:
  /// `others` are the remaining inputs, in order. Their shapes follow from the
  /// sizes that `others` bind; a buffer of another byte size is a BindError.
  std::vector<Tensor> run_unpacking(const std::vector<RawInput>& others, const RawInput& packed,
                                    const std::vector<size_t>& slots,
                                    const ir::SizeBindings& given);

  /// A GPU target's kernel on buffers in the device's memory (CUDA tensors;
  /// for cuda-emulated, CPU ones): the binding for these input types and
  /// shapes (kept, like an Executable), then a call on the caller's buffers,
  /// outputs and workspace of the binding's shapes and bytes
  /// (jit::CompiledFunction::run_on_device).
  const jit::DeviceBinding& device_binding(const std::vector<TensorShape>& inputs,
                                           const ir::SizeBindings& given);
  void run_on_device(const std::vector<TensorShape>& inputs, const ir::SizeBindings& given,
                     const std::vector<const void*>& in, const std::vector<void*>& out,
                     void* workspace);

  const FunctionInfo& info() const { return info_; }
  const jit::CompiledFunction& compiled() const { return compiled_; }

 private:
  using Key = std::pair<std::vector<std::pair<ElemType, std::vector<int64_t>>>, ir::SizeBindings>;
  jit::Executable& bound(const std::vector<RawInput>& inputs, const ir::SizeBindings& given);
  /// The types and shapes of the inputs at `slots` for these other inputs (kept).
  const std::vector<TensorShape>& slot_shapes(const std::vector<RawInput>& others,
                                              const std::vector<size_t>& slots,
                                              const ir::SizeBindings& given);

  jit::CompiledFunction compiled_;
  FunctionInfo info_;
  std::mutex mutex_;
  std::map<Key, std::unique_ptr<jit::Executable>> executables_;
  std::map<Key, jit::DeviceBinding> device_bindings_;
  std::map<std::pair<Key, std::vector<size_t>>, std::vector<TensorShape>> slot_shapes_;
};

/// A copy of a buffer as a Tensor.
Tensor copy_to_tensor(const RawInput& input);

/// Where each of these tensors starts in one packed buffer (64-byte aligned, in
/// order), then the buffer's byte size.
std::vector<int64_t> packed_layout(const std::vector<TensorShape>& tensors);

}  // namespace tenet::python
