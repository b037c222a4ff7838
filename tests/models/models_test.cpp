// Every example program in models/ runs compiled (JIT C++) and agrees with
// the reference interpreter on random inputs.
//
// Tolerance: both sides compute in float32 in the same reduction order, but
// the compiled code is built with -O3 -march=native, which contracts a*b + c
// into fused multiply-adds (one rounding instead of two) and uses its own
// vectorised libm calls. Each such step differs by at most about one float32
// ulp (6e-8 relative); over the longest chains here (reductions of a few
// thousand terms followed by exp/sqrt/sigmoid) that stays well below 1e-5 of
// the output's magnitude. So the bound is max |compiled - interp| <= 1e-5 *
// max |interp| per output tensor; elementwise relative error is not used
// because outputs that saturate (sigmoid near 0) have meaningless relative
// errors in their tiniest entries.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "driver/driver.h"
#include "ir/bind.h"
#include "ir/interp.h"
#include "jit/jit.h"
#include "lang/check.h"
#include "passes/pipeline.h"
#include "tests/models/model_scales.h"
#include "tests/support/golden.h"

namespace {

struct ModelCase {
  const char* file;
  const char* fn;
  tenet::ir::SizeBindings sizes;
  std::map<std::string, double> scales;  // input name -> half-width of its uniform range
};

// Sizes are small so that the interpreter stays fast; the CapsNet runs at its
// real image size (28x28) and batch 2. Weight scales are about 1/sqrt(fan-in),
// so activations neither vanish nor saturate.
// Both CapsNet entries (training and evaluation) take the same parameters.
const std::map<std::string, double> kCapsnetScales = {
    {"image", 1.0},     {"conv1_w", 0.11}, {"conv1_b", 0.1},  {"primary_w", 0.007},
    {"primary_b", 0.1}, {"W", 0.35},       {"dec1_w", 0.08},  {"dec1_b", 0.1},
    {"dec2_w", 0.044},  {"dec2_b", 0.1},   {"dec3_w", 0.031}, {"dec3_b", 0.1}};

const ModelCase kCases[] = {
    {"models/matmul.tn", "matmul", {{"M", 5}, {"K", 7}, {"N", 3}}, {}},
    {"models/linear.tn", "linear", {{"B", 4}, {"I", 6}, {"O", 3}}, {}},
    {"models/conv2d.tn",
     "conv2d",
     {{"B", 2}, {"C", 3}, {"H", 7}, {"W", 6}, {"O", 4}, {"KH", 3}, {"KW", 2}},
     {}},
    {"models/conv2d.tn",
     "conv2d_stride2",
     {{"B", 2}, {"C", 2}, {"H", 20}, {"W", 13}, {"O", 3}},
     {}},
    {"models/maxpool.tn", "maxpool2x2", {{"B", 2}, {"C", 3}, {"H", 6}, {"W", 7}}, {}},
    {"models/softmax.tn", "softmax", {{"N", 4}, {"K", 10}}, {}},
    {"models/layernorm.tn", "layernorm", {{"N", 3}, {"D", 16}}, {}},
    {"models/squash.tn", "squash", {{"B", 2}, {"N", 5}, {"D", 8}}, {}},
    {"models/capsule_transform.tn",
     "capsule_transform",
     {{"B", 2}, {"T", 3}, {"Y", 2}, {"X", 2}, {"D", 8}, {"K", 10}, {"E", 16}},
     {}},
    {"models/routing.tn", "routing", {{"B", 2}, {"I", 12}, {"J", 10}, {"E", 16}}, {}},
    {"models/mlp.tn", "mlp", {{"B", 3}}, tenet::testing::kMlpScales},
    {"models/mnist_cnn.tn", "mnist_cnn", {{"B", 2}}, tenet::testing::kMnistCnnScales},
    {"models/embedding_bag.tn", "embedding_bag", {{"B", 3}}, tenet::testing::kEmbeddingBagScales},
    {"models/capsnet.tn", "capsnet", {{"B", 2}}, kCapsnetScales},
    {"models/capsnet.tn", "capsnet_eval", {{"B", 2}}, kCapsnetScales},
};

class Models : public ::testing::TestWithParam<ModelCase> {};

TEST_P(Models, CompiledMatchesInterpreter) {
  const ModelCase& c = GetParam();
  tenet::SourceFile file = tenet::SourceFile::read(tenet::testing::source_path(c.file));
  tenet::ir::Module m = tenet::lang::compile_source(file);
  tenet::driver::optimise(m);
  const tenet::ir::Function* fn = m.find(c.fn);
  ASSERT_NE(fn, nullptr) << c.fn;

  std::vector<tenet::Tensor> inputs = tenet::ir::random_inputs(*fn, c.sizes, 42);
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto it = c.scales.find(fn->inputs[i]->name);
    if (it == c.scales.end() || !tenet::is_float(inputs[i].type())) continue;
    for (int64_t k = 0; k < inputs[i].numel(); ++k) inputs[i].set(k, inputs[i].get(k) * it->second);
  }

  std::vector<tenet::Tensor> expected = tenet::ir::interpret(*fn, inputs, c.sizes);
  tenet::jit::CompiledFunction compiled = tenet::driver::jit_compile(m, c.fn);
  std::vector<tenet::Tensor> actual = compiled.run(inputs, c.sizes);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_EQ(actual[i].shape(), expected[i].shape());
    double scale = 0;
    for (int64_t k = 0; k < expected[i].numel(); ++k)
      scale = std::max(scale, std::fabs(expected[i].get(k)));
    tenet::Diff d = tenet::compare(actual[i], expected[i]);
    EXPECT_LE(d.max_abs, 1e-5 * std::max(scale, 1e-30))
        << c.file << " " << c.fn << " output " << fn->output_names[i] << ": max abs error "
        << d.max_abs << " at flat index " << d.worst_index << " (interp "
        << expected[i].get(d.worst_index) << ", compiled " << actual[i].get(d.worst_index)
        << "), output magnitude " << scale;
    // Printed for the closing note's table of errors.
    std::printf("%-30s %-18s %-16s max|err| %.3g  max|ref| %.3g  rel %.3g\n", c.file, c.fn,
                fn->output_names[i].c_str(), d.max_abs, scale, d.max_abs / std::max(scale, 1e-30));
  }
}

std::string case_name(const ::testing::TestParamInfo<ModelCase>& info) {
  return info.param.fn;
}

INSTANTIATE_TEST_SUITE_P(All, Models, ::testing::ValuesIn(kCases), case_name);

// Every models/*.tn file is covered by the table above.
TEST(Models, TableCoversEveryModel) {
  namespace fs = std::filesystem;
  std::set<std::string> covered;
  for (const auto& c : kCases) covered.insert(c.file);
  for (const auto& entry : fs::directory_iterator(tenet::testing::source_path("models"))) {
    if (entry.path().extension() != ".tn") continue;
    EXPECT_TRUE(covered.count("models/" + entry.path().filename().string()))
        << entry.path() << " has no case in tests/models/models_test.cpp";
  }
}

}  // namespace
