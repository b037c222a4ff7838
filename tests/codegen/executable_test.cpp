// jit::Executable, the no-allocation fast path: after a warm-up call,
// training steps of compiled gradient programs (a small conv + routing
// CapsNet, and the full CapsNet at a small batch) allocate nothing in the
// calling thread and take no page faults, and give exactly what
// jit::CompiledFunction::run gives (and the interpreter, within tolerance); wrong
// tensors are BindErrors that say what was expected.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <iostream>

#include "ad/grad.h"
#include "driver/driver.h"
#include "ir/bind.h"
#include "ir/interp.h"
#include "jit/executable.h"
#include "passes/pipeline.h"
#include "support/error.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/support/alloc/allocation_counter.h"
#include "tests/support/golden.h"

namespace tenet::codegen::testing {
namespace {

constexpr int kSteps = 4;
/// Minor page faults the whole process may take over the 3 * kSteps calls.
/// The arena and the outputs are touched when binding, so Tenet's own memory
/// never faults; what remains is the runtimes' (an OpenMP worker's stack
/// growing, glibc returning and re-taking heap pages that oneDNN's GEMM
/// allocates and frees on every call; jit/executable.h keeps most of
/// them). Measured: 0 to 2 per call on an Intel machine, 0 to 4.2 (50 in 12
/// calls, varying from run to run with the heap's history) on an AMD EPYC
/// one. Since GEMMs run oneDNN's matmul primitive with a scratchpad of their
/// own (tenet_gemm.h), with one malloc arena and a warm-up call of each entry
/// point: 0 in 8 runs of all three tests (without the warm-up of run_into
/// and run_raw, up to 167 in 12 calls: the heap still growing). A buffer of Tenet's own that were
/// fresh on every call would fault hundreds of times per call.
constexpr int64_t kFaultAllowance = 8 * 3 * kSteps;

/// The gradient of `output` of `fn` in `path` after the pipeline, compiled.
jit::CompiledFunction compiled_gradient(const std::string& path, const std::string& fn,
                                        const std::string& output) {
  ir::Module m = compile_tn(tenet::testing::read_file(tenet::testing::source_path(path)));
  ad::GradRequest req;
  req.output = output;
  ir::Module g;
  g.functions.push_back(ad::differentiate(m, fn, req));
  driver::optimise(g);
  return driver::jit_compile(g, g.functions[0].name, test_jit_options());
}

void expect_identical(const std::vector<Tensor>& actual, const std::vector<Tensor>& expected,
                      const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_EQ(actual[i].shape(), expected[i].shape()) << what << " output " << i;
    EXPECT_EQ(std::memcmp(actual[i].raw(), expected[i].raw(), expected[i].nbytes()), 0)
        << what << ": output " << i << " differs from jit::CompiledFunction::run";
  }
}

/// kSteps calls after a warm-up allocate nothing in this thread (and, where
/// glibc's allocator is in use, take almost no page faults); each gives the
/// outputs jit::CompiledFunction::run gives. Returns the outputs of the last call.
std::vector<Tensor> expect_steps_allocate_nothing(const jit::CompiledFunction& f,
                                                  const ir::SizeBindings& sizes,
                                                  const std::vector<Tensor>& inputs) {
  const std::vector<Tensor> reference = f.run(inputs);
  jit::Executable step(f, sizes);
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < reference.size(); ++i) {
    outputs.emplace_back(reference[i].type(), reference[i].shape());
    // Touched now: a fresh buffer's first write (fresh pages of an mmap,
    // whether glibc gives one depends on the heap's history) is the caller's,
    // not a step's.
    std::memset(outputs.back().raw(), 0, outputs.back().nbytes());
  }
  std::vector<const void*> in;
  for (const Tensor& t : inputs) in.push_back(t.raw());
  std::vector<void*> out;
  for (Tensor& t : outputs) out.push_back(t.raw());

  // Warm-up, one call of each entry point: thread pools, the libraries'
  // primitives and buffers, the heap grown to what a step frees and takes.
  step.run(inputs);
  step.run_into(inputs, outputs);
  step.run_raw(in.data(), out.data());
  const std::vector<std::string> runtimes = {
      jit::blas_library(), jit::dnnl_library()};  // before counting: they allocate
  tenet::testing::Counter counter;
  for (int i = 0; i < kSteps; ++i) {
    step.run(inputs);
    step.run_into(inputs, outputs);
    step.run_raw(in.data(), out.data());
  }
  const tenet::testing::Allocations a = counter.stop(runtimes);
  std::string callers;
  for (const std::string& c : a.other_callers) callers += "\n  " + c;
  EXPECT_EQ(a.cxx, 0) << "operator new calls in " << 3 * kSteps << " steps, from:" << callers;
  if (tenet::testing::glibc_allocator()) {
    EXPECT_EQ(a.c_other, 0) << "malloc calls outside the OpenMP and BLAS runtimes, from:"
                            << callers;
    EXPECT_LE(a.minor_page_faults, kFaultAllowance);
    std::cout << "[ steps    ] " << 3 * kSteps << " calls: " << a.c_runtime + a.cxx_runtime
              << " allocations inside the OpenMP and BLAS runtimes, " << a.minor_page_faults
              << " minor page faults, workspace " << step.workspace_bytes() << " bytes\n";
  }
  expect_identical(step.outputs(), reference, "run");
  expect_identical(outputs, reference, "run_into / run_raw");
  return outputs;
}

TEST(Executable, ConvAndRoutingGradientStepsAllocateNothing) {
  jit::CompiledFunction f =
      compiled_gradient("models/zoo/capsnet_small.tn", "capsnet_small", "loss");
  const ir::SizeBindings sizes = {{"B", 3}, {"C1", 4}, {"P", 8},  {"K", 3},
                                  {"E", 4}, {"H1", 8}, {"H2", 12}};
  const std::vector<Tensor> inputs = ir::random_inputs(f.function(), sizes, 5, 3);
  const std::vector<Tensor> outputs = expect_steps_allocate_nothing(f, sizes, inputs);
  const std::vector<Tensor> expected = ir::interpret(f.function(), inputs);
  for (size_t i = 0; i < expected.size(); ++i)
    expect_close(outputs[i], expected[i], 1e-4, "output " + f.function().outputs[i]->name);
}

TEST(Executable, CapsNetGradientStepsAllocateNothing) {
  // The full model (its pack buffers in chunks, its temporaries sharing
  // memory); the interpreter would take minutes, jit::CompiledFunction::run is
  // the reference (the zoo suite compares the small CapsNet with it).
  jit::CompiledFunction f = compiled_gradient("models/capsnet.tn", "capsnet", "loss");
  const ir::SizeBindings sizes = {{"B", 2}};
  expect_steps_allocate_nothing(f, sizes, ir::random_inputs(f.function(), sizes, 9, 10));
}

TEST(Executable, LibraryConvolutionStepsAllocateNothing) {
  // The MNIST CNN: both convolutions and their gradients in the convolution
  // library (runtime/tenet_conv.h), whose primitives, memory objects and
  // buffers are made by the warm-up call and reused.
  jit::CompiledFunction f = compiled_gradient("models/mnist_cnn.tn", "mnist_cnn", "loss");
  EXPECT_NE(tenet::testing::read_file(f.source_path()).find("tenet::conv2d_backward_data("),
            std::string::npos);
  const ir::SizeBindings sizes = {{"B", 16}};
  expect_steps_allocate_nothing(f, sizes, ir::random_inputs(f.function(), sizes, 4, 10));
}

/// y = 2x + 1 through a temporary, compiled.
jit::CompiledFunction affine() {
  ir::Module m = compile_tn(R"(
def affine(float(N, K) x) -> (y) {
  t(n, k) = x(n, k) * 2
  y(n, k) = t(n, k) + 1
}
)");
  driver::optimise(m);
  return driver::jit_compile(m, "affine", test_jit_options());
}

std::string bind_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const BindError& e) {
    return e.what();
  }
  return "(no BindError)";
}

TEST(Executable, BindsToSizesOrToExampleInputs) {
  jit::CompiledFunction f = affine();
  Tensor x = random_tensor(ElemType::F32, {3, 4}, 1);
  jit::Executable by_sizes(f, {{"N", 3}, {"K", 4}});
  jit::Executable by_inputs = jit::Executable::for_inputs(f, {x});
  EXPECT_EQ(by_inputs.sizes(), by_sizes.sizes());
  EXPECT_EQ(by_sizes.input_shape(0), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(by_sizes.output_shape(0), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(by_inputs.workspace_bytes(), by_sizes.workspace_bytes());
  const Tensor& y = by_sizes.run({x}).at(0);
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(y.get(i), float(2 * float(x.get(i)) + 1));
  EXPECT_EQ(&by_sizes.run({x}), &by_sizes.outputs());  // the same tensors every call
}

TEST(Executable, WrongTensorsAreBindErrors) {
  jit::CompiledFunction f = affine();
  jit::Executable step(f, {{"N", 3}, {"K", 4}});
  const Tensor good = random_tensor(ElemType::F32, {3, 4}, 1);
  EXPECT_EQ(bind_error([&] {
              step.run({random_tensor(ElemType::F32, {3, 5}, 1)});
            }),
            "input 'x': expected float32[N, K] = [3, 4], got float32[3, 5]");
  EXPECT_EQ(bind_error([&] {
              step.run({random_tensor(ElemType::F64, {3, 4}, 1)});
            }),
            "input 'x': expected float32[N, K] = [3, 4], got float64[3, 4]");
  EXPECT_EQ(bind_error([&] { step.run({good, good}); }), "'affine' takes 1 input, 2 given");
  std::vector<Tensor> wrong_out = {Tensor(ElemType::F32, {4, 3})};
  EXPECT_EQ(bind_error([&] { step.run_into({good}, wrong_out); }),
            "output 'y': expected float32[N, K] = [3, 4], got float32[4, 3]");
  std::vector<Tensor> none;
  EXPECT_EQ(bind_error([&] { step.run_into({good}, none); }), "'affine' has 1 output, 0 given");

  EXPECT_EQ(bind_error([&] {
              jit::Executable(f, {{"N", 3}});
            }),
            "size parameter 'K' is not bound; give it with --sizes K=...");
  EXPECT_EQ(bind_error([&] {
              jit::Executable(f, {{"N", 3}, {"K", 4}, {"Q", 1}});
            }),
            "'affine' has no size parameter 'Q'");
  EXPECT_EQ(bind_error([&] {
              jit::Executable(f, {{"N", -1}, {"K", 4}});
            }),
            "size parameter 'N' cannot be negative (given N = -1)");
}

}  // namespace
}  // namespace tenet::codegen::testing
