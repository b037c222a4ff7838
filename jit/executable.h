/// \file
/// The fast path for running a compiled function many times (a training
/// loop, a benchmark, a Python binding): the function bound to concrete
/// sizes, owning everything a call needs.
///
/// Binding does all the allocating once: the workspace, as the memory plan
/// sizes it (codegen/cpp.h: one arena, temporaries that are never live
/// together share memory), 64-byte aligned and with every page touched so
/// that calls take no page faults; and the output tensors. A call checks its
/// inputs against the bound shapes and runs the generated code on them.
///
/// Guarantees:
///   - results are those of CompiledFunction::run on the same inputs (the
///     same generated code runs);
///   - a call allocates nothing on the heap and, once the first call has
///     warmed up the thread pools and the GEMM library, takes no page faults;
///   - a wrong input or output (count, element type, shape) is a BindError
///     naming the tensor, its expected shape (with the size values) and its
///     actual one, thrown before any generated code runs.
/// Not thread-safe: give each thread its own Executable (they may share the
/// CompiledFunction).
///
/// A program or module that links this file sets glibc's mmap threshold to
/// its largest (32 MiB), its trim threshold to 1 GiB, its top pad to 64 MiB
/// and its arena count to 1 (mallopt) when it is loaded, unless
/// TENET_KEEP_FREED_MEMORY=0 (worker threads' arenas shrink on free).
/// oneDNN's GEMM allocates and frees its packing buffers on every call; with
/// glibc's defaults the freed pages went back to the system and faulted in
/// again on the next call (50 to 244 minor faults in 12 MNIST CNN steps).
/// The memory is kept for reuse instead: 0 faults. After its first call an
/// Executable writes 2 MiB of the heap's top once (and frees them), so that
/// what libraries allocate per call later never touches a new page there
/// (LeNet-5's training step: 5 faults in 300 steps before, 0 after).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "jit/jit.h"
#include "support/tensor.h"

namespace tenet::jit {

class Executable {
 public:
  /// Binds `f` to `sizes`, which must give every size parameter the function
  /// uses (BindError otherwise, and for sizes that make a range negative or a
  /// read leave its tensor).
  Executable(const CompiledFunction& f, const ir::SizeBindings& sizes);
  /// Binds `f` to the sizes of example inputs, solved as CompiledFunction::run
  /// solves them (ir::bind_sizes; `given` adds sizes no input shows).
  static Executable for_inputs(const CompiledFunction& f, const std::vector<Tensor>& inputs,
                               const ir::SizeBindings& given = {});

  Executable(Executable&&) noexcept;
  Executable& operator=(Executable&&) noexcept;
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;
  ~Executable();

  /// Runs on `inputs` (one per function input, in order) and returns the
  /// outputs it owns, which the next call overwrites.
  const std::vector<Tensor>& run(const std::vector<Tensor>& inputs);
  /// Runs on `inputs` into caller-provided `outputs` (one per function output,
  /// of the bound shapes and types; they must not overlap the inputs).
  void run_into(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs);
  /// Runs without any check: dense row-major buffers of the bound shapes and
  /// types, the inputs' then the outputs' in order (for callers that checked
  /// them already, e.g. against input_shape()). An output that updates an
  /// input (ir::Function::updated_input) may be given the input's buffer:
  /// the update then happens in place.
  void run_raw(const void* const* inputs, void* const* outputs);

  /// The owned outputs (what run() returns).
  const std::vector<Tensor>& outputs() const { return outputs_; }
  const ir::SizeBindings& sizes() const { return sizes_; }
  const std::vector<int64_t>& input_shape(size_t i) const { return input_shapes_.at(i); }
  const std::vector<int64_t>& output_shape(size_t i) const { return output_shapes_.at(i); }
  /// The bytes of the planned workspace this Executable owns.
  int64_t workspace_bytes() const { return workspace_bytes_; }
  const CompiledFunction& function() const { return f_; }

 private:
  struct FreeArena {
    void operator()(void* p) const;
  };
  void check_inputs(const std::vector<Tensor>& inputs) const;
  void check_outputs(const std::vector<Tensor>& outputs) const;
  void call();  // runs on buffers_

  CompiledFunction f_;
  ir::SizeBindings sizes_;
  std::vector<int64_t> size_values_;  // in fn.size_params order
  std::vector<std::vector<int64_t>> input_shapes_, output_shapes_;
  std::vector<Tensor> outputs_;
  std::vector<const void*> in_;       // the call's, one per IR input
  std::vector<void*> out_;            // and output
  std::vector<size_t> output_bytes_;  // per output
  std::vector<void*> buffers_;        // the packed call's (CompiledFunction::pack)
  std::unique_ptr<void, FreeArena> arena_;
  int64_t workspace_bytes_ = 0;
  bool headroom_ = false;  // the heap's headroom written, after the first call
};

}  // namespace tenet::jit
