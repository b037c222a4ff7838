// The device-resident entry point of a GPU target's function
// (`tenet_f__packed_on_device`, jit::CompiledFunction::bind_on_device and
// run_on_device): buffers that are the device's already, nothing copied.
// On the grid emulator the device's memory is the host's, so these calls run
// the very path a caller with CUDA tensors takes (tenet.torch_op on a GPU),
// against the interpreter: bound from shapes alone, outputs that update an
// input in place, the workspace given or allocated per call, and every
// failure a BindError naming what went wrong.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "cuda/device.h"
#include "driver/driver.h"
#include "ir/interp.h"
#include "support/error.h"
#include "tests/cuda/cuda_zoo.h"
#include "tests/zoo/zoo_util.h"

namespace tenet::cuda::testing {
namespace {

struct Loaded {
  driver::Compilation compilation;
  std::vector<jit::CompiledFunction> compiled;
  const ir::Function* fn = nullptr;
};

Loaded load(const std::string& model, const std::string& fn, const std::string& target) {
  driver::Request r;
  r.path = std::string(TENET_SOURCE_DIR) + "/models/zoo/" + model + ".tn";
  r.target = target;
  r.functions.push_back({fn, std::nullopt});
  Loaded l;
  l.compilation = driver::compile(r);
  l.compiled = driver::load(r, l.compilation, zoo::test_jit_options());
  l.fn = l.compilation.checked->find(fn);
  return l;
}

std::vector<TensorShape> shapes_of(const std::vector<Tensor>& tensors) {
  std::vector<TensorShape> shapes;
  for (const Tensor& t : tensors) shapes.push_back(t.shape_only());
  return shapes;
}

/// Runs `f` through the device entry on copies of `inputs` ("device"
/// buffers); an output that updates an input gets that input's buffer.
std::vector<Tensor> run_on_device(const jit::CompiledFunction& f, const ir::Function& fn,
                                  const std::vector<Tensor>& inputs, bool own_workspace) {
  const jit::DeviceBinding b = f.bind_on_device(shapes_of(inputs));
  std::vector<Tensor> device_inputs;
  for (const Tensor& t : inputs) device_inputs.push_back(t.cast(t.type()));  // a copy
  std::vector<Tensor> outputs;
  std::vector<const void*> in;
  std::vector<void*> out;
  for (const Tensor& t : device_inputs) in.push_back(t.raw());
  for (size_t i = 0; i < b.outputs.size(); ++i) {
    const int k = fn.updated_input(i);
    outputs.push_back(k >= 0 ? device_inputs[size_t(k)]
                             : Tensor(b.outputs[i].type, b.outputs[i].shape));
    out.push_back(outputs.back().raw());
  }
  std::vector<unsigned char> workspace(size_t(own_workspace ? b.workspace_bytes + 64 : 0));
  void* at = nullptr;
  if (own_workspace) {  // 64-byte aligned, as the workspace must be
    const uintptr_t p = reinterpret_cast<uintptr_t>(workspace.data());
    at = workspace.data() + (64 - p % 64) % 64;
  }
  f.run_on_device(b, in.data(), out.data(), at);
  return outputs;
}

void expect_matches_interpreter(const std::string& model, const std::string& fn_name,
                                const ir::SizeBindings& sizes) {
  const Loaded l = load(model, fn_name, "cuda-emulated");
  ASSERT_TRUE(l.compiled.at(0).runs_on_device());
  const std::vector<Tensor> inputs = zoo::make_inputs(*l.fn, sizes, 3);
  const std::vector<Tensor> expected = ir::interpret(*l.fn, inputs);
  for (bool own_workspace : {true, false}) {
    const std::vector<Tensor> actual = run_on_device(l.compiled[0], *l.fn, inputs, own_workspace);
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i)
      EXPECT_LE(zoo::max_rel_to_peak(actual[i], expected[i]), 1e-6)
          << model << ": " << l.fn->output_names[i];
  }
}

TEST(DeviceEntry, RunsOnDeviceBuffersAsTheInterpreterDoes) {
  expect_matches_interpreter("softmax", "softmax", {{"N", 37}, {"K", 300}});
  expect_matches_interpreter("matmul", "matmul", {{"M", 5}, {"N", 7}, {"K", 9}});
}

TEST(DeviceEntry, UpdatesOutputsInTheirInputsBuffers) {
  expect_matches_interpreter("tc_update_output", "tc_update_output", {{"N", 6}, {"K", 70}});
  const Loaded l = load("tc_update_output", "tc_update_output", "cuda-emulated");
  const std::vector<Tensor> inputs = zoo::make_inputs(*l.fn, {{"N", 2}, {"K", 3}}, 3);
  const jit::DeviceBinding b = l.compiled[0].bind_on_device(shapes_of(inputs));
  std::vector<Tensor> outputs;
  std::vector<const void*> in;
  std::vector<void*> out;
  for (const Tensor& t : inputs) in.push_back(t.raw());
  for (const TensorShape& s : b.outputs) {
    outputs.emplace_back(s.type, s.shape);
    out.push_back(outputs.back().raw());
  }
  try {
    l.compiled[0].run_on_device(b, in.data(), out.data(), nullptr);
    FAIL() << "no error";
  } catch (const BindError& e) {
    EXPECT_NE(std::string(e.what()).find("updates an input: on the device, give it the input's"),
              std::string::npos)
        << e.what();
  }
}

TEST(DeviceEntry, BindsFromShapesWithTheHostsMessages) {
  const Loaded l = load("softmax", "softmax", "cuda-emulated");
  try {
    l.compiled[0].bind_on_device({{ElemType::F32, {3}}});
    FAIL() << "no error";
  } catch (const BindError& e) {
    EXPECT_EQ(std::string(e.what()), "input 'z': expected float32[N, K], got float32[3]");
  }
  const jit::DeviceBinding b = l.compiled[0].bind_on_device({{ElemType::F32, {4, 5}}});
  EXPECT_EQ(b.sizes.at("N"), 4);
  ASSERT_EQ(b.outputs.size(), 1u);
  EXPECT_EQ(b.outputs[0].shape, (std::vector<int64_t>{4, 5}));
  EXPECT_GT(b.workspace_bytes, 0);
  // A CPU target's function has no device entry.
  const Loaded cpu = load("softmax", "softmax", "cpp");
  EXPECT_FALSE(cpu.compiled[0].runs_on_device());
  EXPECT_THROW(cpu.compiled[0].bind_on_device({{ElemType::F32, {4, 5}}}), BindError);
}

TEST(DeviceEntry, AnIndexOutOfRangeIsABindError) {
  const Loaded l = load("tc_gather", "tc_gather", "cuda-emulated");
  const ir::SizeBindings sizes{{"V", 5}, {"J", 3}, {"N", 3}, {"K", 2}, {"R", 6}};
  std::vector<Tensor> inputs = zoo::make_inputs(*l.fn, sizes, 3, {{"P", 0.1, 4.9}}, 4);
  inputs[1].data<int32_t>()[0] = 99;  // I(0, 0): a row of LUT that does not exist
  try {
    run_on_device(l.compiled[0], *l.fn, inputs, true);
    FAIL() << "no error";
  } catch (const BindError& e) {
    EXPECT_NE(std::string(e.what()).find("99"), std::string::npos) << e.what();
  }
}

// On a GPU (skipped, saying why, without one): the device entry on buffers
// uploaded to it gives the emulator's bits for a softmax (its exp is Tenet's
// own on both) with grouped reductions, and updates an output in place.
TEST(DeviceEntry, OnTheGpuGivesTheEmulatorsBits) {
  try {
    find_gpu();
  } catch (const UsageError& e) {
    GTEST_SKIP() << e.what();
  }
  for (const auto& [model, sizes] : std::vector<std::pair<std::string, ir::SizeBindings>>{
           {"softmax", {{"N", 37}, {"K", 3000}}}, {"tc_update_output", {{"N", 6}, {"K", 70}}}}) {
    const Loaded gpu = load(model, model, "cuda");
    const Loaded emulated = load(model, model, "cuda-emulated");
    const std::vector<Tensor> inputs = zoo::make_inputs(*gpu.fn, sizes, 3);
    const std::vector<Tensor> expected =
        run_on_device(emulated.compiled[0], *emulated.fn, inputs, true);
    const jit::DeviceBinding b = gpu.compiled[0].bind_on_device(shapes_of(inputs));
    std::vector<std::unique_ptr<DeviceBuffer>> in, out;
    std::vector<const void*> in_ptrs;
    std::vector<void*> out_ptrs;
    for (const Tensor& t : inputs) {
      in.push_back(std::make_unique<DeviceBuffer>(t.nbytes()));
      in.back()->upload(t.raw(), t.nbytes());
      in_ptrs.push_back(in.back()->data());
    }
    for (size_t i = 0; i < b.outputs.size(); ++i) {
      const int k = gpu.fn->updated_input(i);
      if (k < 0) {
        out.push_back(
            std::make_unique<DeviceBuffer>(Tensor(b.outputs[i].type, b.outputs[i].shape).nbytes()));
        out_ptrs.push_back(out.back()->data());
      } else {
        out.push_back(nullptr);
        out_ptrs.push_back(const_cast<void*>(in_ptrs[size_t(k)]));
      }
    }
    DeviceBuffer workspace(size_t(b.workspace_bytes));
    gpu.compiled[0].run_on_device(b, in_ptrs.data(), out_ptrs.data(), workspace.data());
    for (size_t i = 0; i < b.outputs.size(); ++i) {
      Tensor got(b.outputs[i].type, b.outputs[i].shape);
      const int k = gpu.fn->updated_input(i);
      (out[i] ? *out[i] : *in[size_t(k)]).download(got.raw(), got.nbytes());
      EXPECT_EQ(std::memcmp(got.raw(), expected[i].raw(), got.nbytes()), 0)
          << model << ": " << gpu.fn->output_names[i] << " differs from the emulator's bits";
    }
  }
}

}  // namespace
}  // namespace tenet::cuda::testing
