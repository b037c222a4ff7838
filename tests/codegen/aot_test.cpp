// Ahead-of-time output: the emitted project builds on its own with CMake, a
// C program links against it, and its results equal the interpreter's.
#include "jit/aot.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "driver/driver.h"
#include "ir/bind.h"
#include "ir/interp.h"
#include "support/error.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/support/golden.h"

namespace tenet::codegen::testing {
namespace {

namespace fs = std::filesystem;

const char* const kKernels = R"(
def softmax_last(float(N, K) z) -> (p) {
  m(n) max=! z(n, k)
  e(n, k) = exp(z(n, k) - m(n))
  t(n) +=! e(n, k)
  p(n, k) = e(n, k) / t(n)
}

def pool(float(H, W) x) -> (y) {
  y(i, j) max=! x(2*i + ki, 2*j + kj) where ki in 0:2, kj in 0:2, i in 0:H/2, j in 0:W/2
}
)";

// Calls both functions: softmax_last allocating its own workspace, pool with
// one the caller provides. Arguments: N K H W in-file out-file.
const char* const kMain = R"(#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

int main(int argc, char** argv) {
  if (argc != 7) return 2;
  int64_t N = atoll(argv[1]), K = atoll(argv[2]), H = atoll(argv[3]), W = atoll(argv[4]);
  size_t n_in = (size_t)(N * K + H * W), n_out = (size_t)(N * K + (H / 2) * (W / 2));
  float* in = malloc(n_in * sizeof(float));
  float* out = malloc(n_out * sizeof(float));
  FILE* f = fopen(argv[5], "rb");
  if (!f || fread(in, sizeof(float), n_in, f) != n_in) return 3;
  fclose(f);
  tenet_softmax_last(N, K, in, out);
  int64_t bytes = tenet_pool__workspace_bytes(H, W);
  void* workspace = bytes > 0 ? aligned_alloc(64, (size_t)bytes) : NULL;
  tenet_pool__with_workspace(H, W, in + N * K, out + N * K, workspace);
  free(workspace);
  if (strstr(tenet_softmax_last__signature(), "tenet_softmax_last") == NULL) return 4;
  f = fopen(argv[6], "wb");
  if (!f || fwrite(out, sizeof(float), n_out, f) != n_out) return 5;
  fclose(f);
  printf("ok\n");
  return 0;
}
)";

TEST(Aot, ProjectBuildsStandaloneAndMatchesTheInterpreter) {
  const std::string root = fresh_folder("aot");
  const std::string project = root + "/kernels";
  ir::Module m = compile_tn(kKernels);
  CppOptions options;
  options.unit_name = "kernels";
  jit::emit_project(driver::emit_cpp(m, {}, options), m.functions.front(), project);
  for (const char* file :
       {"kernels.h", "kernels.cpp", "tenet_runtime.h", "CMakeLists.txt", "README.md"})
    EXPECT_TRUE(fs::exists(project + "/" + file)) << file;
  const std::string readme = tenet::testing::read_file(project + "/README.md");
  EXPECT_NE(readme.find(
                "void tenet_softmax_last(int64_t t_N, int64_t t_K, const float* t_z, float* t_p);"),
            std::string::npos)
      << readme;

  // A consumer in C, built with the project as a subdirectory.
  const std::string consumer = root + "/consumer";
  fs::create_directories(consumer);
  std::ofstream(consumer + "/main.c") << kMain;
  std::ofstream(consumer + "/CMakeLists.txt")
      << "cmake_minimum_required(VERSION 3.14)\nproject(consumer C CXX)\n"
      << "add_subdirectory(" << project << " kernels)\n"
      << "add_executable(consumer main.c)\ntarget_link_libraries(consumer PRIVATE kernels)\n";
  const std::string build = root + "/build";
  auto configure = tenet::testing::run_command("cmake -S " + consumer + " -B " + build +
                                               " -DCMAKE_BUILD_TYPE=Release 2>&1");
  ASSERT_EQ(configure.exit_code, 0) << configure.out;
  auto compile = tenet::testing::run_command("cmake --build " + build + " -j 2 2>&1");
  ASSERT_EQ(compile.exit_code, 0) << compile.out;
  EXPECT_TRUE(fs::exists(build + "/kernels/libkernels.a"));
  EXPECT_TRUE(fs::exists(build + "/kernels/libkernels.so"));

  const ir::SizeBindings sizes{{"N", 5}, {"K", 13}, {"H", 9}, {"W", 6}};
  std::vector<Tensor> softmax_in = ir::random_inputs(*m.find("softmax_last"), sizes, 31);
  std::vector<Tensor> pool_in = ir::random_inputs(*m.find("pool"), sizes, 32);
  {
    std::ofstream in(root + "/in.bin", std::ios::binary);
    in.write(static_cast<const char*>(softmax_in[0].raw()),
             std::streamsize(softmax_in[0].nbytes()));
    in.write(static_cast<const char*>(pool_in[0].raw()), std::streamsize(pool_in[0].nbytes()));
  }
  auto run = tenet::testing::run_command(build + "/consumer 5 13 9 6 " + root + "/in.bin " + root +
                                         "/out.bin");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;

  Tensor softmax_expected = ir::interpret(*m.find("softmax_last"), softmax_in)[0];
  Tensor pool_expected = ir::interpret(*m.find("pool"), pool_in)[0];
  Tensor softmax_out(ElemType::F32, softmax_expected.shape());
  Tensor pool_out(ElemType::F32, pool_expected.shape());
  std::ifstream out(root + "/out.bin", std::ios::binary);
  out.read(static_cast<char*>(softmax_out.raw()), std::streamsize(softmax_out.nbytes()));
  out.read(static_cast<char*>(pool_out.raw()), std::streamsize(pool_out.nbytes()));
  ASSERT_TRUE(out) << "the consumer wrote too little";
  expect_close(softmax_out, softmax_expected, 1e-5, "softmax_last (AOT)");
  expect_close(pool_out, pool_expected, 0, "pool (AOT)");
}

TEST(Aot, UnwritableFolderIsABindError) {
  const ir::Module m = compile_tn(kKernels);
  EXPECT_THROW(
      jit::emit_project(driver::emit_cpp(m), m.functions.front(), "/proc/tenet-cannot-write-here"),
      BindError);
}

}  // namespace
}  // namespace tenet::codegen::testing
