// Compiled functions run on caller-owned buffers (kernel.h).
#include "python/src/kernel.h"

#include <algorithm>
#include <cstring>

#include "ir/bind.h"
#include "support/error.h"

namespace tenet::python {

Tensor copy_to_tensor(const RawInput& input) {
  Tensor t(input.type, input.shape);
  if (t.nbytes() > 0) std::memcpy(t.raw(), input.data, t.nbytes());
  return t;
}

Kernel::Kernel(jit::CompiledFunction compiled, FunctionInfo info)
    : compiled_(std::move(compiled)), info_(std::move(info)) {}

jit::Executable& Kernel::bound(const std::vector<RawInput>& inputs, const ir::SizeBindings& given) {
  Key key{{}, given};
  for (const RawInput& in : inputs) key.first.emplace_back(in.type, in.shape);
  auto it = executables_.find(key);
  if (it != executables_.end()) return *it->second;
  // New shapes: bind_sizes checks every input against the declared shapes.
  std::vector<Tensor> examples;
  for (const RawInput& in : inputs) examples.push_back(copy_to_tensor(in));
  auto executable =
      std::make_unique<jit::Executable>(jit::Executable::for_inputs(compiled_, examples, given));
  if (executables_.size() >= kMaxBound) executables_.clear();
  return *executables_.emplace(std::move(key), std::move(executable)).first->second;
}

namespace {

int64_t bytes_of(const TensorShape& t) {
  int64_t bytes = int64_t(byte_size(t.type));
  for (int64_t d : t.shape) bytes *= d;
  return bytes;
}

}  // namespace

std::vector<int64_t> packed_layout(const std::vector<TensorShape>& tensors) {
  constexpr int64_t kAlign = 64;
  std::vector<int64_t> offsets;
  int64_t at = 0;
  for (const TensorShape& t : tensors) {
    offsets.push_back(at);
    at += (bytes_of(t) + kAlign - 1) / kAlign * kAlign;
  }
  offsets.push_back(at);
  return offsets;
}

std::vector<Tensor> Kernel::run(const std::vector<RawInput>& inputs, const ir::SizeBindings& given,
                                size_t pack_from) {
  std::lock_guard<std::mutex> lock(mutex_);
  jit::Executable& executable = bound(inputs, given);
  std::vector<const void*> in;
  for (const RawInput& r : inputs) in.push_back(r.data);
  std::vector<Tensor> outputs;
  std::vector<void*> out;
  const ir::Function& fn = compiled_.function();
  const size_t separate = std::min(pack_from, fn.outputs.size());
  for (size_t i = 0; i < separate; ++i) {
    // written whole by the call (tests/zoo/split_test.cpp fills them with NaN first)
    outputs.push_back(Tensor::unfilled(fn.outputs[i]->type, executable.output_shape(i)));
    out.push_back(outputs.back().raw());
  }
  if (pack_from < SIZE_MAX) {
    std::vector<TensorShape> packed;
    for (size_t i = separate; i < fn.outputs.size(); ++i)
      packed.push_back({fn.outputs[i]->type, executable.output_shape(i)});
    const std::vector<int64_t> offsets = packed_layout(packed);
    outputs.push_back(Tensor::unfilled(ElemType::U8, {offsets.back()}));
    auto* base = static_cast<unsigned char*>(outputs.back().raw());
    for (size_t j = 0; j < packed.size(); ++j) {
      out.push_back(base + offsets[j]);
      // the padding after each value is zeroed, so that equal calls give equal bytes
      const int64_t bytes = bytes_of(packed[j]);
      std::memset(base + offsets[j] + bytes, 0, size_t(offsets[j + 1] - offsets[j] - bytes));
    }
  }
  executable.run_raw(in.data(), out.data());
  return outputs;
}

const std::vector<TensorShape>& Kernel::slot_shapes(const std::vector<RawInput>& others,
                                                    const std::vector<size_t>& slots,
                                                    const ir::SizeBindings& given) {
  std::pair<Key, std::vector<size_t>> key{{{}, given}, slots};
  for (const RawInput& in : others) key.first.first.emplace_back(in.type, in.shape);
  auto it = slot_shapes_.find(key);
  if (it != slot_shapes_.end()) return it->second;
  // The sizes the other inputs bind (the slots' shapes are expressions in them).
  const ir::Function& fn = compiled_.function();
  ir::Function others_only;
  others_only.name = fn.name;
  others_only.size_params = fn.size_params;
  std::vector<TensorShape> shapes;
  for (size_t i = 0, k = 0; i < fn.inputs.size(); ++i) {
    if (k < slots.size() && slots[k] == i) {
      ++k;
      continue;
    }
    others_only.inputs.push_back(fn.inputs[i]);
  }
  if (others_only.inputs.size() != others.size())
    throw BindError("'" + fn.name + "' takes " + std::to_string(others_only.inputs.size()) +
                    " inputs beside the packed ones, got " + std::to_string(others.size()));
  for (const RawInput& in : others) shapes.push_back({in.type, in.shape});
  const ir::SizeBindings sizes = ir::bind_shapes(others_only, shapes, given);
  std::vector<TensorShape> out;
  for (size_t slot : slots)
    out.push_back({fn.inputs.at(slot)->type, ir::concrete_shape(*fn.inputs.at(slot), sizes)});
  if (slot_shapes_.size() >= kMaxBound) slot_shapes_.clear();
  return slot_shapes_.emplace(std::move(key), std::move(out)).first->second;
}

std::vector<Tensor> Kernel::run_unpacking(const std::vector<RawInput>& others,
                                          const RawInput& packed, const std::vector<size_t>& slots,
                                          const ir::SizeBindings& given) {
  std::vector<TensorShape> shapes;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    shapes = slot_shapes(others, slots, given);
  }
  const std::vector<int64_t> offsets = packed_layout(shapes);
  const int64_t bytes = bytes_of({packed.type, packed.shape});
  if (packed.shape.size() != 1 || bytes != offsets.back())
    throw BindError("'" + compiled_.function().name + "': the packed saved values take " +
                    std::to_string(offsets.back()) + " bytes for these inputs, the buffer has " +
                    std::to_string(bytes));
  std::vector<RawInput> inputs;
  const auto* base = static_cast<const unsigned char*>(packed.data);
  for (size_t i = 0, k = 0, o = 0; i < others.size() + slots.size(); ++i) {
    if (k < slots.size() && slots[k] == i) {
      inputs.push_back({shapes[k].type, shapes[k].shape, base + offsets[k]});
      ++k;
    } else {
      inputs.push_back(others.at(o++));
    }
  }
  return run(inputs, given);
}

const jit::DeviceBinding& Kernel::device_binding(const std::vector<TensorShape>& inputs,
                                                 const ir::SizeBindings& given) {
  Key key{{}, given};
  for (const TensorShape& in : inputs) key.first.emplace_back(in.type, in.shape);
  auto it = device_bindings_.find(key);
  if (it != device_bindings_.end()) return it->second;
  if (device_bindings_.size() >= kMaxBound) device_bindings_.clear();
  return device_bindings_.emplace(std::move(key), compiled_.bind_on_device(inputs, given))
      .first->second;
}

void Kernel::run_on_device(const std::vector<TensorShape>& inputs, const ir::SizeBindings& given,
                           const std::vector<const void*>& in, const std::vector<void*>& out,
                           void* workspace) {
  std::lock_guard<std::mutex> lock(mutex_);
  const jit::DeviceBinding& binding = device_binding(inputs, given);
  const ir::Function& fn = compiled_.function();
  if (in.size() != fn.inputs.size() || out.size() != fn.outputs.size())
    throw BindError("'" + fn.name + "' takes " + std::to_string(fn.inputs.size()) + " input and " +
                    std::to_string(fn.outputs.size()) + " output buffers");
  compiled_.run_on_device(binding, in.data(), out.data(), workspace);
}

}  // namespace tenet::python
