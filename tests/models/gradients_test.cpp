// The gradients `tenet train` compiles — of a model's loss with respect to
// every parameter, through the whole optimising pipeline — agree with the
// interpreter running the unoptimised gradient program on the same inputs.
//
// The MNIST CNN exercises every way a contraction is lowered in a real
// training step: the forward convolutions and linear layers as GEMMs, the
// weight gradients with both factors packed, and conv2's input gradient split
// into a GEMM per image into columns and a col2im gather
// (passes/contraction_split.h); the test checks that the split happened.
//
// Tolerance: the GEMMs sum in their own order (blocked, vectorised), the
// interpreter sequentially, both in float32; as in
// tests/codegen/contraction_util.h the difference stays below
// 1e-5 * sqrt(K) * max |interpreter| for the longest reduction K (conv2's
// weight gradient: B x 24 x 24 = 1152 terms at batch 2, so 3.4e-4).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "ad/grad.h"
#include "driver/driver.h"
#include "ir/bind.h"
#include "ir/conv_plan.h"
#include "ir/gemm_plan.h"
#include "ir/interp.h"
#include "jit/jit.h"
#include "lang/check.h"
#include "passes/pipeline.h"
#include "tests/models/model_scales.h"
#include "tests/support/golden.h"

namespace {

struct GradCase {
  const char* file;
  const char* fn;
  std::vector<std::string> params;
  std::map<std::string, double> scales;  // half-width of each input's range
  int64_t batch;
  double tolerance;  // relative to the largest interpreter value, per output
};

// GoogleTest prints a parameter with this.
void PrintTo(const GradCase& c, std::ostream* os) {
  *os << c.file << ", " << c.fn;
}

const GradCase kGradCases[] = {
    {"models/mlp.tn",
     "mlp",
     {"fc1_w", "fc1_b", "fc2_w", "fc2_b"},
     tenet::testing::kMlpScales,
     3,
     1e-5 * std::sqrt(784.0)},
    {"models/mnist_cnn.tn",
     "mnist_cnn",
     {"conv1_w", "conv1_b", "conv2_w", "conv2_b", "fc1_w", "fc1_b", "fc2_w", "fc2_b"},
     tenet::testing::kMnistCnnScales,
     2,
     1e-5 * std::sqrt(2 * 24 * 24.0)},
};

/// The gradient of `fn`'s loss with respect to `params`, as `tenet train`
/// derives it (the first function of the returned module, unoptimised), and
/// `optimised`, the same after the whole pipeline.
tenet::ir::Module differentiate_loss(const char* file, const char* fn,
                                     const std::vector<std::string>& params,
                                     tenet::ir::Module* optimised) {
  tenet::SourceFile source = tenet::SourceFile::read(tenet::testing::source_path(file));
  tenet::ir::Module m = tenet::lang::compile_source(source);
  const tenet::ir::Function* f = m.find(fn);
  EXPECT_NE(f, nullptr) << fn;
  tenet::ad::GradRequest request;
  request.output = "loss";
  request.wrt = params;
  tenet::ir::Module grad;
  if (f) grad.functions.push_back(tenet::ad::differentiate(*f, request));
  for (const tenet::ir::Function& g : grad.functions) optimised->functions.push_back(g.clone());
  tenet::driver::optimise(*optimised);
  return grad;
}

class ModelGradients : public ::testing::TestWithParam<GradCase> {};

TEST_P(ModelGradients, CompiledMatchesInterpreter) {
  const GradCase& c = GetParam();
  tenet::ir::Module m;
  const tenet::ir::Module unoptimised = differentiate_loss(c.file, c.fn, c.params, &m);
  ASSERT_EQ(unoptimised.functions.size(), 1u);
  const tenet::ir::Function& reference = unoptimised.functions[0];
  const std::string name = reference.name;

  const tenet::ir::SizeBindings sizes = {{"B", c.batch}};
  std::vector<tenet::Tensor> inputs = tenet::ir::random_inputs(reference, sizes, 42);
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto scale = c.scales.find(reference.inputs[i]->name);
    if (scale == c.scales.end() || !tenet::is_float(inputs[i].type())) continue;
    for (int64_t k = 0; k < inputs[i].numel(); ++k)
      inputs[i].set(k, inputs[i].get(k) * scale->second);
  }

  std::vector<tenet::Tensor> expected = tenet::ir::interpret(reference, inputs, sizes);
  tenet::jit::CompiledFunction compiled = tenet::driver::jit_compile(m, name);
  std::vector<tenet::Tensor> actual = compiled.run(inputs, sizes);
  ASSERT_EQ(actual.size(), expected.size());
  ASSERT_EQ(actual.size(), 2 + c.params.size());  // the forward outputs, then one per parameter
  for (size_t i = 0; i < actual.size(); ++i) {
    const std::string& output = reference.output_names[i];
    ASSERT_EQ(actual[i].shape(), expected[i].shape()) << output;
    double peak = 0;
    for (int64_t k = 0; k < expected[i].numel(); ++k)
      peak = std::max(peak, std::fabs(expected[i].get(k)));
    // A gradient that is 0 everywhere would agree vacuously.
    EXPECT_GT(peak, 0) << c.fn << ": " << output << " is 0 everywhere";
    tenet::Diff d = tenet::compare(actual[i], expected[i]);
    EXPECT_LE(d.max_abs, c.tolerance * peak)
        << c.fn << ": compiled " << output << " differs by " << d.max_abs << " at flat index "
        << d.worst_index << " (interp " << expected[i].get(d.worst_index) << ", compiled "
        << actual[i].get(d.worst_index) << "), peak " << peak;
  }
}

std::string grad_case_name(const ::testing::TestParamInfo<GradCase>& info) {
  return info.param.fn;
}

INSTANTIATE_TEST_SUITE_P(Training, ModelGradients, ::testing::ValuesIn(kGradCases), grad_case_name);

// The CNN's two convolutions and their gradients (conv1's input gradient is
// not needed) run in the convolution library (runtime/tenet_conv.h; what
// CompiledMatchesInterpreter then checks).
TEST(ModelGradients, MnistCnnConvolutionsRunInTheLibrary) {
  const GradCase& cnn = kGradCases[1];
  tenet::ir::Module m;
  differentiate_loss(cnn.file, cnn.fn, cnn.params, &m);
  ASSERT_EQ(m.functions.size(), 1u);
  std::string plans;
  for (const tenet::ir::Stmt& s : m.functions[0].body)
    if (s.kind == tenet::ir::StmtKind::Compute && s.annotations.conv)
      plans += tenet::ir::describe(*s.annotations.conv, s.compute) + "\n";
  EXPECT_EQ(plans,
            "forward: conv1[B, 32, 26, 26] = conv(normalised[B, 1, 28, 28], conv1_w[32, 1, 3, 3], "
            "stride 1x1, pad 0x0)\n"
            "forward: conv2[B, 64, 24, 24] = conv(relu1[B, 32, 26, 26], conv2_w[64, 32, 3, 3], "
            "stride 1x1, pad 0x0)\n"
            "backward_data: d_relu1[B, 32, 26, 26] = conv_data(d_conv2[B, 64, 24, 24], "
            "conv2_w[64, 32, 3, 3], stride 1x1, pad 0x0)\n"
            "backward_weights: d_conv2_w[64, 32, 3, 3] = conv_weights(relu1[B, 32, 26, 26], "
            "d_conv2[B, 64, 24, 24], stride 1x1, pad 0x0)\n"
            "backward_weights: d_conv1_w[32, 1, 3, 3] = conv_weights(normalised[B, 1, 28, 28], "
            "d_conv1[B, 32, 26, 26], stride 1x1, pad 0x0)\n");
}

}  // namespace
