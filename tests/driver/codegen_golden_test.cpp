// The generated C++ of canonical kernels as users receive it: through the
// whole driver (front end, AD, every optimisation pass, code generation),
// with GEMM lowering, packing, chunking and col2im where the kernels use
// them. Pinned so that every change to the text is reviewed
// (TENET_UPDATE_GOLDENS=1 rewrites them); test_zoo checks the same programs
// compiled against the interpreter.
#include <gtest/gtest.h>

#include "driver/driver.h"
#include "tests/support/golden.h"

namespace tenet::driver {
namespace {

struct Kernel {
  const char* file;  // under models/
  const char* fn;
  bool vjp;  // its vector-Jacobian product program instead
};

std::string generated(const Kernel& k) {
  const std::string path = std::string("models/") + k.file + ".tn";
  Request r;
  r.path = path;
  r.text = tenet::testing::read_file(tenet::testing::source_path(path));
  ad::GradRequest vjp;
  vjp.vjp = true;
  r.functions = {{k.fn, k.vjp ? std::optional(vjp) : std::nullopt}};
  r.emit_code = true;
  r.cpp.origin = path;
  return print_cpp(*compile(r).cpp);
}

TEST(PipelineGolden, CanonicalKernels) {
  const Kernel kernels[] = {
      {"zoo/conv2d_stride1", "conv2d_stride1", false},
      {"zoo/conv2d_stride1", "conv2d_stride1", true},
      {"zoo/conv2d_stride2", "conv2d_stride2", false},
      {"zoo/conv2d_stride2", "conv2d_stride2", true},
      // CapsNet's primary capsules: 9x9 kernels of stride 2, whose input
      // gradient is split into a GEMM and a col2im scatter.
      {"conv2d", "conv2d_stride2", true},
      {"zoo/routing_step", "routing_step", false},
      {"zoo/softmax", "softmax", false},
      // Data-dependent reads: run-time index checks, a row gather found once
      // per row, ragged ranges as loop bounds, scatter-add gradients.
      {"zoo/tc_gather", "tc_gather", false},
      {"zoo/tc_gather", "tc_gather", true},
      {"zoo/tc_index_math", "tc_index_math", false},
      // Outputs updated in place: one buffer per output (inout), and a copy
      // of the one initial value read after its output is written.
      {"zoo/tc_update_output", "tc_update_output", false},
      {"zoo/tc_update_output", "tc_update_output", true},
  };
  for (const Kernel& k : kernels) {
    const std::string name = std::string(k.file).starts_with("zoo/")
                                 ? std::string(k.fn)
                                 : std::string(k.file) + "." + k.fn;
    SCOPED_TRACE(name);
    tenet::testing::expect_golden(
        "codegen/pipeline/" + name + (k.vjp ? ".vjp" : "") + ".cpp.expected", generated(k));
  }
}

// The same text as `tenet print FILE [--grad FN --vjp] --stage cpp`.
TEST(PipelineGolden, MatchesTheCommandLine) {
  const std::string cli = tenet::testing::tenet_binary() + " print models/zoo/conv2d_stride2.tn " +
                          "--grad conv2d_stride2 --vjp --stage cpp";
  tenet::testing::CommandResult r =
      tenet::testing::run_command("cd " + tenet::testing::source_path("") + " && " + cli);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, generated({"zoo/conv2d_stride2", "conv2d_stride2", true}));
}

}  // namespace
}  // namespace tenet::driver
