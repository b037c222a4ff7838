// The LLTM cell (models/zoo/lltm.tn): its concatenation `select(j < S, h?,
// x?) * w` becomes two contractions (index_split), its input and weight
// gradients lose their guards on out indices (hoist). Compiled code must
// match the interpreter with J equal to, below and above S + I, with the
// GEMMs running and with loops (small odd sizes).
#include <gtest/gtest.h>

#include "ad/grad.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/codegen/contraction_util.h"
#include "tests/support/golden.h"

namespace tenet::codegen::testing {
namespace {

ir::Module lltm_module() {
  return compile_tn(tenet::testing::read_file(tenet::testing::source_path("models/zoo/lltm.tn")));
}

ir::Module lltm_gradient() {
  ad::GradRequest req;
  req.vjp = true;
  ir::Module out;
  out.functions.push_back(ad::differentiate(lltm_module(), "lltm", req));
  return out;
}

/// G = 3 S as in the cell; J = S + I + j_delta.
ir::SizeBindings sizes(int64_t b, int64_t i, int64_t s, int64_t j_delta) {
  return {{"B", b}, {"I", i}, {"S", s}, {"G", 3 * s}, {"J", s + i + j_delta}};
}

// The two halves of the gates; the input gradients d_h, d_x; the two halves of d_w.
constexpr int kForwardGemms = 2;
constexpr int kGradientGemms = 6;

TEST(ContractionLltm, ForwardOddSizes) {
  for (int64_t j_delta : {0, -3, -9, 4})
    expect_gemm_matches_interpreter(lltm_module(), "lltm", sizes(3, 5, 7, j_delta), kForwardGemms);
}

TEST(ContractionLltm, GradientOddSizes) {
  for (int64_t j_delta : {0, -3, -9, 4})
    expect_gemm_matches_interpreter(lltm_gradient(), "lltm_grad", sizes(3, 5, 7, j_delta),
                                    kGradientGemms);
}

TEST(ContractionLltm, GemmSizes) {
  // Every product is at least passes::kGemmMinWork multiply-adds at J = S + I.
  expect_gemm_matches_interpreter(lltm_gradient(), "lltm_grad", sizes(19, 29, 41, 0),
                                  kGradientGemms);
  expect_gemm_matches_interpreter(lltm_module(), "lltm", sizes(19, 29, 41, 0), kForwardGemms);
  expect_gemm_matches_interpreter(lltm_gradient(), "lltm_grad", sizes(19, 29, 41, 7),
                                  kGradientGemms);
}

}  // namespace
}  // namespace tenet::codegen::testing
