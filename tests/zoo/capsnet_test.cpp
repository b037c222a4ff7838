// The real CapsNet (models/capsnet.tn, MNIST size) at batch 1: the gradient
// of the capsule transform W, through three routing iterations, the margin
// loss and the masked decoder, against central finite differences in
// float64, at a few sampled coordinates. One interpreted forward takes
// seconds (the primary convolution alone is 190M multiply-adds), and each
// sampled entry costs two, so only a handful are sampled. The reduced-size
// CapsNet (models/zoo/capsnet_small.tn, in the zoo table) checks every
// parameter and the compiled gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "ad/gradcheck.h"
#include "ir/interp.h"
#include "lang/check.h"
#include "support/diagnostics.h"
#include "tests/support/golden.h"
#include "tests/zoo/zoo_util.h"

namespace tenet::zoo {
namespace {

// Realistic scales: the image in [0, 1), every weight uniform in
// +-1/sqrt(fan-in), small biases. With [-1, 1) weights the 20736-term
// primary convolution would saturate every capsule (|v| -> 1) and the
// margin loss would sit on its flat parts.
std::vector<InputRange> realistic_ranges() {
  auto fan_in = [](double n) { return 1 / std::sqrt(n); };
  return {{"image", 0, 1},
          {"conv1_w", -fan_in(81), fan_in(81)},
          {"conv1_b", -0.01, 0.01},
          {"primary_w", -fan_in(256 * 81), fan_in(256 * 81)},
          {"primary_b", -0.01, 0.01},
          {"W", -fan_in(8), fan_in(8)},
          {"dec1_w", -fan_in(160), fan_in(160)},
          {"dec1_b", -0.01, 0.01},
          {"dec2_w", -fan_in(512), fan_in(512)},
          {"dec2_b", -0.01, 0.01},
          {"dec3_w", -fan_in(1024), fan_in(1024)},
          {"dec3_b", -0.01, 0.01}};
}

// Every entry of the lengths (class scores) and of the reconstruction, in
// [lo, hi].
void expect_within(const Tensor& t, double lo, double hi, const char* what) {
  for (int64_t i = 0; i < t.numel(); ++i)
    EXPECT_TRUE(lo < t.get(i) && t.get(i) < hi) << what << "[" << i << "] = " << t.get(i);
}

TEST(CapsNetFullSize, CapsuleTransformGradientMatchesFiniteDifferences) {
  ir::Module m =
      lang::compile_source(SourceFile::read(tenet::testing::source_path("models/capsnet.tn")));
  const ir::Function* capsnet = m.find("capsnet");
  ASSERT_NE(capsnet, nullptr);
  std::vector<Tensor> inputs = make_inputs(*capsnet, {{"B", 1}}, 11, realistic_ranges());

  // The regime is realistic: capsule lengths well inside (0, 1) (about 0.06
  // to 0.2 here: the squash is neither vanishing nor saturated, and both
  // margin terms are active), and the decoder's sigmoid is not saturated.
  std::vector<Tensor> out = ir::interpret(*capsnet, inputs);
  expect_within(out[0], 0.02, 0.9, "lengths");
  expect_within(out[1], 0.05, 0.95, "reconstruction");

  ad::GradcheckOptions options;
  options.request = {{"W"}, "loss", false};
  options.inputs = inputs;
  // 7 entries, evenly spread over W's 1.5M: 7 does not divide the extent, so
  // they land on different capsules, digit classes and dimensions.
  options.max_entries = 7;
  // W's gradient entries are small (down to ~1e-6) while L ~ 0.6: float64
  // rounding in L (~1e-16 L / h) leaves finite differences with the default
  // h = 1e-6 good to only ~3e-4 of them. At h = 1e-3 rounding is 1000x
  // smaller and the truncation error (~h^2) stays far below the tolerance
  // (the worst entry measures 5e-7).
  options.step = 1e-3;
  ad::GradcheckReport report = ad::gradcheck(*capsnet, options);
  std::printf("%s", ad::format_report(report).c_str());
  ASSERT_EQ(report.inputs.size(), 1u);
  EXPECT_TRUE(report.pass) << ad::format_report(report);
  EXPECT_EQ(report.inputs[0].checked, 7);
  EXPECT_EQ(report.inputs[0].kinks, 0);
  EXPECT_NE(report.inputs[0].worst_ad, 0);  // a nonzero gradient was compared
}

}  // namespace
}  // namespace tenet::zoo
