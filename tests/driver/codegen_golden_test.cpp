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
  const char* file;  // under models/zoo/
  bool vjp;          // its vector-Jacobian product program instead
};

std::string generated(const Kernel& k) {
  const std::string path = std::string("models/zoo/") + k.file + ".tn";
  Request r;
  r.path = path;
  r.text = tenet::testing::read_file(tenet::testing::source_path(path));
  ad::GradRequest vjp;
  vjp.vjp = true;
  r.functions = {{k.file, k.vjp ? std::optional(vjp) : std::nullopt}};
  r.emit_cpp = true;
  r.cpp.origin = path;
  return print_cpp(*compile(r).cpp);
}

TEST(PipelineGolden, CanonicalKernels) {
  for (const Kernel& k : {Kernel{"conv2d_stride1", false}, Kernel{"conv2d_stride1", true},
                          Kernel{"conv2d_stride2", false}, Kernel{"conv2d_stride2", true},
                          Kernel{"routing_step", false}, Kernel{"softmax", false}}) {
    SCOPED_TRACE(k.file);
    tenet::testing::expect_golden(
        std::string("codegen/pipeline/") + k.file + (k.vjp ? ".vjp" : "") + ".cpp", generated(k));
  }
}

// The same text as `tenet print FILE [--grad FN --vjp] --stage cpp`.
TEST(PipelineGolden, MatchesTheCommandLine) {
  const std::string cli = tenet::testing::tenet_binary() + " print models/zoo/conv2d_stride2.tn " +
                          "--grad conv2d_stride2 --vjp --stage cpp";
  tenet::testing::CommandResult r =
      tenet::testing::run_command("cd " + tenet::testing::source_path("") + " && " + cli);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, generated({"conv2d_stride2", true}));
}

}  // namespace
}  // namespace tenet::driver
