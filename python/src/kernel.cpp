// Compiled functions run on caller-owned buffers (kernel.h).
#include "python/src/kernel.h"

#include <cstring>

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

std::vector<Tensor> Kernel::run(const std::vector<RawInput>& inputs,
                                const ir::SizeBindings& given) {
  std::lock_guard<std::mutex> lock(mutex_);
  jit::Executable& executable = bound(inputs, given);
  std::vector<const void*> in;
  for (const RawInput& r : inputs) in.push_back(r.data);
  std::vector<Tensor> outputs;
  std::vector<void*> out;
  const ir::Function& fn = compiled_.function();
  for (size_t i = 0; i < fn.outputs.size(); ++i) {
    outputs.emplace_back(fn.outputs[i]->type, executable.output_shape(i));
    out.push_back(outputs.back().raw());
  }
  executable.run_raw(in.data(), out.data());
  return outputs;
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
