// A libtorch C++ caller of Tenet's operators (built by test_torch_op.py with
// torch.utils.cpp_extension.load): it knows an operator only by its
// dispatcher name, finds it with c10::Dispatcher and calls it boxed, as any
// C++ code linked against libtorch would; call_and_backward then runs
// autograd's backward from C++ and returns the inputs' gradients.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <string>
#include <vector>

namespace {

std::vector<at::Tensor> call(std::string name, std::vector<at::Tensor> inputs) {
  const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow(name.c_str(), "");
  std::vector<c10::IValue> stack(inputs.begin(), inputs.end());
  op.callBoxed(stack);
  std::vector<at::Tensor> outputs;
  for (const c10::IValue& v : stack) outputs.push_back(v.toTensor());
  return outputs;
}

// Backward of the sum of every float output; an input without a gradient
// (an integer input) comes back as an empty tensor.
std::vector<at::Tensor> call_and_backward(std::string name, std::vector<at::Tensor> inputs) {
  at::Tensor total;
  for (const at::Tensor& out : call(name, inputs)) {
    if (!out.is_floating_point()) continue;
    total = total.defined() ? total + out.sum() : out.sum();
  }
  total.backward();
  std::vector<at::Tensor> grads;
  for (const at::Tensor& in : inputs)
    grads.push_back(in.grad().defined() ? in.grad() : at::empty({0}));
  return grads;
}

}  // namespace

TORCH_LIBRARY(tenet_cpp_test, m) {
  m.def("call(str name, Tensor[] inputs) -> Tensor[]", &call);
  m.def("call_and_backward(str name, Tensor[] inputs) -> Tensor[]", &call_and_backward);
}
