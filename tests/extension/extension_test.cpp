// `tenet emit --target torch` (extension/torch_project.h): the operator source
// and C++ header as goldens (the LLTM, and tests/extension/shapes.tn's integer
// input, computed, fixed and updated sizes, and an operator with no
// backward), the project's files, and the requests it refuses. The projects
// are built, loaded and checked against PyTorch by
// tests/python/test_torch_extension.py.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "extension/torch_project.h"
#include "support/error.h"
#include "tests/support/golden.h"

namespace tenet::extension {
namespace {

namespace fs = std::filesystem;

struct Emitted {
  TorchProject project;
  fs::path dir;
  std::string file(const std::string& name) const {
    return tenet::testing::read_file((dir / name).string());
  }
};

Emitted emit(const std::string& model, TorchProjectOptions options, const std::string& tag) {
  const fs::path dir = fs::temp_directory_path() /
                       ("tenet-extension-test-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  options.overwrite = true;
  Emitted e{
      emit_torch_project(tenet::testing::source_path(model), std::nullopt, dir.string(), options),
      dir};
  return e;
}

TEST(TorchExtensionGolden, Lltm) {
  TorchProjectOptions o;
  o.ns = "lltm_ops";
  const Emitted e = emit("models/zoo/lltm.tn", o, "lltm");
  EXPECT_EQ(e.project.operators,
            (std::vector<std::string>{"lltm_ops::lltm", "lltm_ops::lltm_backward"}));
  EXPECT_EQ(e.project.sources, (std::vector<std::string>{"lltm_ops_ops.cpp", "lltm_ops_kernels.cpp",
                                                         "lltm_ops_kernels_f64.cpp"}));
  tenet::testing::expect_golden("extension/lltm_ops_ops.cpp.expected", e.file("lltm_ops_ops.cpp"));
  tenet::testing::expect_golden("extension/lltm_ops.h.expected", e.file("lltm_ops.h"));
  // the project builds on its own: runtime headers and CMake beside the code
  for (const char* f : {"tenet_torch.h", "tenet_runtime.h", "tenet_gemm.h", "CMakeLists.txt",
                        "README.md", "lltm_ops_kernels.h", "lltm_ops_kernels_f64.h"})
    EXPECT_TRUE(fs::exists(e.dir / f)) << f;
  const std::string cmake = e.file("CMakeLists.txt");
  EXPECT_NE(cmake.find("find_package(Torch REQUIRED)"), std::string::npos);
  EXPECT_NE(cmake.find("add_library(lltm_ops SHARED lltm_ops_ops.cpp"), std::string::npos);
  // the float64 kernels are the same functions with every float as double
  EXPECT_NE(e.file("lltm_ops_kernels_f64.h").find("void tenet_lltm_f64(int64_t t_B"),
            std::string::npos);
  EXPECT_NE(e.file("lltm_ops_kernels_f64.h").find("const double* t_x"), std::string::npos);
  fs::remove_all(e.dir);
}

TEST(TorchExtensionGolden, ShapesOfEveryKind) {
  TorchProjectOptions o;
  o.sizes = {{"M", 3}};
  const Emitted e = emit("tests/extension/shapes.tn", o, "shapes");
  EXPECT_EQ(e.project.ns, "shapes");  // the file's stem
  // count_positive has no float output: no backward operator
  EXPECT_EQ(e.project.operators.back(), "shapes::count_positive");
  tenet::testing::expect_golden("extension/shapes_ops.cpp.expected", e.file("shapes_ops.cpp"));
  fs::remove_all(e.dir);
}

void expect_refused(const std::string& model, TorchProjectOptions o, const std::string& message) {
  try {
    emit(model, o, "refused");
    ADD_FAILURE() << "no error; expected: " << message;
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(TorchExtension, RefusesWhatAnOperatorCannotBe) {
  TorchProjectOptions o;
  expect_refused("tests/extension/shapes.tn", o,
                 "size parameter M of 'repeat' is not the size of any input dimension, so an "
                 "operator cannot infer it: fix it with --sizes M=VALUE");
  o.sizes = {{"M", 3}};
  for (const std::string ns : {"torch", "aten", "tenet_ops", "std"}) {
    o.ns = ns;
    expect_refused("tests/extension/shapes.tn", o, "the namespace '" + ns + "' is taken");
  }
  o.ns = "my-ops";
  expect_refused("tests/extension/shapes.tn", o, "is not an identifier");
  o.ns = "ok";
  o.functions = {"window", "repeat"};
  o.name = "both";
  expect_refused("tests/extension/shapes.tn", o, "--name names the operator of one function");
  o.functions = {"nope"};
  o.name.clear();
  expect_refused("tests/extension/shapes.tn", o, "no function named 'nope'");
  o.sizes = {{"M", -1}};
  o.functions = {"repeat"};
  expect_refused("tests/extension/shapes.tn", o, "--sizes: M = -1 is negative");
}

TEST(TorchExtension, FromTheCommandLine) {
  const fs::path dir =
      fs::temp_directory_path() / ("tenet-extension-cli-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string tenet = tenet::testing::tenet_binary();
  const std::string model = tenet::testing::source_path("models/zoo/lltm.tn");
  auto r = tenet::testing::run_command(
      tenet + " emit " + model + " --target torch --namespace cell_ops --fn lltm --name cell -o " +
      dir.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(PyTorch extension cell_ops: cell_ops::cell cell_ops::cell_backward)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(tenet::testing::read_file((dir / "cell_ops.h").string()).find("cell_ops::cell"),
            std::string::npos);
  r = tenet::testing::run_command(tenet + " emit " + model +
                                  " --target cpp --namespace cell_ops -o " + dir.string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--namespace is for --target torch"), std::string::npos) << r.err;
  r = tenet::testing::run_command(tenet + " emit " + model + " --target torch --train -o " +
                                  dir.string());
  EXPECT_NE(r.err.find("--target torch emits operators"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tenet::extension
