// Gradient programs printed as source (what `tenet print --grad` shows) check
// back into functions that compute the same forward outputs and gradients:
// softmax, squash, convolutions of stride 1 and 2, max-pooling, one routing
// iteration, a scalar loss, and every function of models/ in
// vector-Jacobian mode. (Here rather than in tests/lang because it needs AD.)
#include <gtest/gtest.h>

#include <filesystem>

#include "ad/grad.h"
#include "lang/check.h"
#include "tests/lang/unparse_roundtrip.h"
#include "tests/support/golden.h"

namespace tenet {
namespace {

namespace fs = std::filesystem;
using tenet::testing::expect_unparse_roundtrip;

ir::Module compile_file(const std::string& relative) {
  return lang::compile_source(
      SourceFile(relative, tenet::testing::read_file(tenet::testing::source_path(relative))));
}

ir::Function gradient(const std::string& file, const std::string& fn, bool vjp) {
  ir::Module m = compile_file(file);
  ad::GradRequest req;
  req.vjp = vjp;
  return ad::differentiate(m, fn, req);
}

struct Case {
  const char* file;
  const char* fn;
  bool vjp;
  ir::SizeBindings sizes;
};

TEST(UnparseGradient, IssueExamples) {
  const Case cases[] = {
      {"models/softmax.tn", "softmax", true, {{"N", 3}, {"K", 4}}},
      {"models/squash.tn", "squash", true, {{"B", 2}, {"N", 3}, {"D", 4}}},
      {"models/conv2d.tn",
       "conv2d",
       true,
       {{"B", 2}, {"C", 2}, {"H", 6}, {"W", 5}, {"O", 3}, {"KH", 3}, {"KW", 2}}},
      {"models/conv2d.tn",
       "conv2d_stride2",
       true,
       {{"B", 1}, {"C", 2}, {"H", 12}, {"W", 11}, {"O", 2}}},
      {"models/maxpool.tn", "maxpool2x2", true, {{"B", 1}, {"C", 2}, {"H", 6}, {"W", 5}}},
      {"tests/cli/data/routing_step.tn",
       "routing_step",
       true,
       {{"B", 2}, {"I", 3}, {"J", 2}, {"D", 4}}},
      {"tests/cli/data/conv_loss.tn",
       "conv_loss",
       false,
       {{"B", 2}, {"C", 2}, {"H", 5}, {"W", 6}, {"O", 2}, {"K", 3}}},
      {"tests/cli/data/xent.tn", "xent", false, {{"B", 3}, {"K", 4}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.file) + ":" + c.fn);
    expect_unparse_roundtrip(gradient(c.file, c.fn, c.vjp), c.sizes);
  }
}

// Every function of models/, differentiated with respect to every float
// input in vector-Jacobian mode, except CapsNet's full-size entries (its
// capsules, training and evaluation functions), whose gradients are too slow
// for the interpreter: CapsNet's printed gradient must check.
TEST(UnparseGradient, EveryModel) {
  for (const auto& entry : fs::directory_iterator(tenet::testing::source_path("models"))) {
    if (entry.path().extension() != ".tn") continue;
    std::string file = entry.path().filename().string();
    ir::Module m = compile_file("models/" + file);
    for (const ir::Function& fn : m.functions) {
      std::string key = file + ":" + fn.name;
      SCOPED_TRACE(key);
      if (key == "capsnet.tn:capsnet" || key == "capsnet.tn:capsnet_eval" ||
          key == "capsnet.tn:digit_capsules")
        continue;
      auto sizes = tenet::testing::model_sizes().find(key);
      ASSERT_NE(sizes, tenet::testing::model_sizes().end()) << "no sizes for " << key;
      ad::GradRequest req;
      req.vjp = true;
      expect_unparse_roundtrip(ad::differentiate(fn, req), sizes->second);
    }
  }
}

TEST(UnparseGradient, CapsNetGradientChecks) {
  ir::Module m = compile_file("models/capsnet.tn");
  ad::GradRequest req;
  req.output = "loss";
  ir::Function g = ad::differentiate(m, "capsnet", req);
  std::string text = lang::unparse(g);
  ir::Module back = lang::compile_source(SourceFile("capsnet_grad.tn", text));
  ASSERT_EQ(back.functions.size(), 1u);
  EXPECT_EQ(back.functions[0].outputs.size(), g.outputs.size());
  EXPECT_EQ(back.functions[0].output_names, g.output_names);
}

}  // namespace
}  // namespace tenet
