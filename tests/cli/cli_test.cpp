// End-to-end tests of the `tenet` command line: exit codes, diagnostics on
// stderr, output format, agreement of the interpreter and the C++ backend.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/cli/cli_util.h"

namespace fs = std::filesystem;
using tenet::testing::checksum_lines;
using tenet::testing::Cli;
using tenet::testing::CommandResult;
using tenet::testing::expect_golden;
using tenet::testing::run_command;
using tenet::testing::source_path;
using tenet::testing::tenet_cmd;

namespace {

const char* kSquash = R"(# squash: scale each capsule vector to length < 1
def squash(float(B, N, D) s) -> (v) {
  n2(b, n) +=! s(b, n, d) * s(b, n, d)
  v(b, n, d) = s(b, n, d) * sqrt(n2(b, n) + 1e-7) / (1 + n2(b, n))
}
)";

}  // namespace

TEST_F(Cli, HelpForEveryCommand) {
  for (const char* cmd : {"check", "print", "run", "gradcheck", "emit"}) {
    CommandResult r = run_command(tenet_cmd(std::string(cmd) + " --help"));
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find(std::string("usage: tenet ") + cmd), std::string::npos) << r.out;
  }
  CommandResult r = run_command(tenet_cmd("--help"));
  EXPECT_EQ(r.exit_code, 0);
  expect_golden("cli/help.txt", r.out);
}

TEST_F(Cli, CheckPrintsSignatures) {
  write("squash.tn", kSquash);
  CommandResult r = run_in_dir("check squash.tn");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "squash(s: float32[B, N, D]) -> (v: float32[B, N, D])\nsquash.tn: ok\n");
  // An output defined in a loop is an SSA value "x.1" but is shown by its source name.
  write("loop.tn", "def f(float(N) x) -> (y) {\n  for it in 0:2 {\n    y(i) = x(i) * 2\n  }\n}\n");
  r = run_in_dir("check loop.tn");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "f(x: float32[N]) -> (y: float32[N])\nloop.tn: ok\n");
}

TEST_F(Cli, ErrorsGoToStderrWithNonZeroExit) {
  write("bad.tn", "def f(float(N) x) -> (y) {\n  y(i) = x(i) + q(i)\n}\n");
  CommandResult r = run_in_dir("check bad.tn");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(r.err.rfind("bad.tn:2:17: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("^"), std::string::npos) << r.err;
}

TEST_F(Cli, MissingFileAndBadOptions) {
  CommandResult r = run_command(tenet_cmd("check /nonexistent/x.tn"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot open '/nonexistent/x.tn'"), std::string::npos) << r.err;
  write("squash.tn", kSquash);
  r = run_in_dir("run squash.tn --frobnicate");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: unknown option '--frobnicate' for 'tenet run' (see tenet run --help)\n");
  r = run_in_dir("run squash.tn --sizes B=2,N=3");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("size parameter 'D' of input 's' is not bound"), std::string::npos) << r.err;
  r = run_in_dir("run squash.tn --sizes B=two");
  EXPECT_EQ(r.exit_code, 1);
  r = run_in_dir("run squash.tn --fn nope --sizes B=1,N=1,D=1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no function 'nope'"), std::string::npos) << r.err;
}

TEST_F(Cli, RunInterpreterAndCppAgree) {
  write("squash.tn", kSquash);
  CommandResult interp = run_in_dir("run squash.tn --sizes B=2,N=3,D=4 --seed 7");
  ASSERT_EQ(interp.exit_code, 0) << interp.err;
  expect_golden("cli/run_squash.txt", interp.out);
  CommandResult cpp = run_in_dir("run squash.tn --sizes B=2,N=3,D=4 --seed 7 --backend cpp");
  ASSERT_EQ(cpp.exit_code, 0) << cpp.err;
  // Same checksums to the printed 9 significant digits (float32 math on both sides).
  EXPECT_EQ(checksum_lines(interp.out), checksum_lines(cpp.out));
  EXPECT_NE(cpp.out.find("function squash (backend cpp)"), std::string::npos);
}

TEST_F(Cli, PrintStages) {
  write("squash.tn", kSquash);
  CommandResult parse = run_in_dir("print squash.tn --stage parse");
  EXPECT_EQ(parse.exit_code, 0) << parse.err;
  EXPECT_NE(parse.out.find("n2(b, n) +=! s(b, n, d) * s(b, n, d)"), std::string::npos);
  CommandResult ir = run_in_dir("print squash.tn --stage check");
  EXPECT_EQ(ir.exit_code, 0) << ir.err;
  EXPECT_NE(ir.out.find("squash"), std::string::npos);
  CommandResult cpp = run_in_dir("print squash.tn --stage cpp");
  EXPECT_EQ(cpp.exit_code, 0) << cpp.err;
  EXPECT_NE(cpp.out.find("__restrict__"), std::string::npos);
  // Every stage of the driver prints; the IR ones as IR.
  for (const char* stage : {"retype", "ad", "simplify", "dce", "hoist", "index_split",
                            "contraction", "fuse", "schedule"}) {
    CommandResult r = run_in_dir("print squash.tn --stage " + std::string(stage));
    EXPECT_EQ(r.exit_code, 0) << stage << ": " << r.err;
    EXPECT_EQ(r.out.rfind("func squash[B, N, D](", 0), 0u) << stage << ": " << r.out;
  }
  // The lowering stages print the lowered form: plans, then the memory plan.
  CommandResult live = run_in_dir("print squash.tn --stage liveness");
  EXPECT_EQ(live.exit_code, 0) << live.err;
  EXPECT_EQ(live.out, "lowered squash: 0 GEMM statements\nworkspace: 0 slots\n");
  CommandResult memory = run_in_dir("print squash.tn --stage plan_memory");
  EXPECT_EQ(memory.exit_code, 0) << memory.err;
  // The squared norm n2, read only in its nest: a row at a time, no slot.
  EXPECT_EQ(memory.out,
            "lowered squash: 0 GEMM statements\nworkspace: 0 slots\nrow-local %n2: 1 float32 "
            "inside 2 shared loops (dimensions 0, 1)\n");
  const std::string stages =
      " (stages: parse, check, retype, ad, simplify, dce, hoist, index_split, contraction, "
      "fuse, split, schedule, liveness, lower_gemm, lower_scatter, lower_conv, plan_memory, "
      "lower_loops, "
      "cpp)\n";
  CommandResult bad = run_in_dir("print squash.tn --stage nosuchpass");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err, "error: unknown stage 'nosuchpass'" + stages);
  CommandResult bad_dump = run_in_dir("run squash.tn --dump-after=simplfy");
  EXPECT_EQ(bad_dump.exit_code, 1);
  EXPECT_EQ(bad_dump.err, "error: unknown stage 'simplfy'" + stages);
}

// --target chooses the target whose stages follow the shared ones
// (driver/target.h); cpp is the default.
TEST_F(Cli, PrintTargets) {
  write("squash.tn", kSquash);
  CommandResult cpp = run_in_dir("print squash.tn --stage cpp");
  CommandResult chosen = run_in_dir("print squash.tn --stage cpp --target cpp");
  EXPECT_EQ(chosen.exit_code, 0) << chosen.err;
  EXPECT_EQ(chosen.out, cpp.out);
  CommandResult grad = run_in_dir("print squash.tn --grad squash --vjp --stage cpp --target cpp");
  EXPECT_EQ(grad.exit_code, 0) << grad.err;
  EXPECT_NE(grad.out.find("tenet_squash_grad("), std::string::npos);
  // A GPU target's stages: its kernels in the loop tree, then its code.
  CommandResult kernels =
      run_in_dir("print squash.tn --grad squash --vjp --stage map_kernels --target cuda");
  EXPECT_EQ(kernels.exit_code, 0) << kernels.err;
  EXPECT_NE(kernels.out.find("kernel thread"), std::string::npos) << kernels.out;
  CommandResult cuda = run_in_dir("print squash.tn --stage cuda --target cuda");
  EXPECT_EQ(cuda.exit_code, 0) << cuda.err;
  EXPECT_NE(cuda.out.find("__global__ void __launch_bounds__(256) tenet_squash__k0("),
            std::string::npos)
      << cuda.out;
  for (const char* command :
       {"print squash.tn --target metal", "emit squash.tn --target metal -o x",
        "print squash.tn --grad squash --target metal"}) {
    CommandResult bad = run_in_dir(command);
    EXPECT_EQ(bad.exit_code, 1) << command;
    EXPECT_EQ(bad.err, "error: unknown target 'metal' (targets: cpp, cuda-emulated, cuda)\n")
        << command;
  }
}

TEST_F(Cli, DumpAfterAll) {
  write("squash.tn", kSquash);
  CommandResult r = run_in_dir("run squash.tn --sizes B=1,N=1,D=2 --dump-after=all");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Every stage, in order: the source, the IR of each IR stage, the C++.
  size_t at = 0;
  for (const char* title :
       {"source after parse", "IR after check", "IR after retype", "IR after ad",
        "IR after simplify", "IR after schedule", "C++ after cpp"}) {
    at = r.err.find("// ----- " + std::string(title) + " -----\n", at);
    EXPECT_NE(at, std::string::npos) << title << "\n" << r.err;
  }
  // TENET_DUMP_AFTER adds to the option.
  CommandResult env = run_command("cd " + dir_.string() + " && TENET_DUMP_AFTER=dce " +
                                  tenet_cmd("run squash.tn --sizes B=1,N=1,D=2 --dump-after=ad"));
  EXPECT_EQ(env.exit_code, 0) << env.err;
  EXPECT_NE(env.err.find("// ----- IR after ad -----\n"), std::string::npos) << env.err;
  EXPECT_NE(env.err.find("// ----- IR after dce -----\n"), std::string::npos) << env.err;
  EXPECT_EQ(env.err.find("after check"), std::string::npos) << env.err;
}

// The CUDA target's project (docs/cuda.md): host code, the kernels' .cu and
// a CMakeLists.txt that needs only the CUDA toolkit; built here (nvcc needs
// no GPU), the kernels embedded in the library. Without a toolkit, skipped.
TEST_F(Cli, EmitCudaBuildsWithTheToolkitAlone) {
  if (run_command("command -v nvcc || test -x /usr/local/cuda/bin/nvcc").exit_code != 0)
    GTEST_SKIP() << "no CUDA toolkit (nvcc) here";
  write("squash.tn", kSquash);
  CommandResult r = run_in_dir("emit squash.tn --target cuda -o out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* file : {"tenet_squash.cu", "tenet_squash.cpp", "tenet_cuda.h",
                           "tenet_cuda_device.h", "embed_kernels.cmake"})
    EXPECT_TRUE(fs::exists(dir_ / "out" / file)) << file;
  CommandResult build =
      run_command("PATH=$PATH:/usr/local/cuda/bin cmake -S " + (dir_ / "out").string() + " -B " +
                  (dir_ / "out-build").string() + " >/dev/null && cmake --build " +
                  (dir_ / "out-build").string() + " >/dev/null && nm -D " +
                  (dir_ / "out-build" / "libtenet_squash.so").string() +
                  " | grep -c tenet_squash__kernels_image");
  EXPECT_EQ(build.exit_code, 0) << build.out << build.err;
  EXPECT_EQ(build.out, "1\n");
  // Two units in one program: each keeps its own kernels, loader and
  // runtime (runtime/tenet_cuda.h), so their static libraries link together.
  write("softmax.tn",
        "def softmax(float(N, K) z) -> (p) {\n  m(n) max=! z(n, k)\n"
        "  e(n, k) = exp(z(n, k) - m(n))\n  total(n) +=! e(n, k)\n"
        "  p(n, k) = e(n, k) / total(n)\n}\n");
  write("main.cpp",
        "#include \"tenet_softmax.h\"\n#include \"tenet_squash.h\"\n"
        "int main() { return tenet_softmax__signature()[0] != "
        "tenet_squash__signature()[0]; }\n");
  ASSERT_EQ(run_in_dir("emit softmax.tn --target cuda -o out4").exit_code, 0);
  build = run_command(
      "cd " + dir_.string() + " && PATH=$PATH:/usr/local/cuda/bin cmake -S out4 -B out4-build " +
      ">/dev/null && cmake --build out4-build >/dev/null && c++ -std=c++17 main.cpp -Iout " +
      "-Iout4 out-build/libtenet_squash.a out4-build/libtenet_softmax.a " +
      "-L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcudart -lcublas -o two && ./two");
  EXPECT_EQ(build.exit_code, 0) << build.out << build.err;
  // A training project (the trainer's runtime and the model's kernels): its
  // generated code and kernels build with the toolkit (the whole project
  // builds like the CPU one, tests/training/standalone_test.cpp).
  fs::copy_file(source_path("models/mnist_cnn.tn"), dir_ / "cnn.tn");
  CommandResult train = run_in_dir("emit cnn.tn --target cuda --train -o out2");
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_TRUE(fs::exists(dir_ / "out2" / "cnn_kernels.cu"));
  build = run_command("PATH=$PATH:/usr/local/cuda/bin cmake -S " + (dir_ / "out2").string() +
                      " -B " + (dir_ / "out2-build").string() + " >/dev/null && cmake --build " +
                      (dir_ / "out2-build").string() + " --target cnn_objects >/dev/null");
  EXPECT_EQ(build.exit_code, 0) << build.out << build.err;
  CommandResult functions = run_in_dir("emit squash.tn --target cuda-emulated -o out3");
  EXPECT_EQ(functions.exit_code, 1);
  EXPECT_NE(functions.err.find("(or 'cuda-emulated' with --train)"), std::string::npos);
}

TEST_F(Cli, EmitBuildsStandalone) {
  write("squash.tn", kSquash);
  CommandResult r = run_in_dir("emit squash.tn --target cpp -o out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "out" / "CMakeLists.txt"));
  CommandResult build =
      run_command("cmake -S " + (dir_ / "out").string() + " -B " + (dir_ / "out-build").string() +
                  " >/dev/null && cmake --build " + (dir_ / "out-build").string() + " >/dev/null");
  EXPECT_EQ(build.exit_code, 0) << build.out << build.err;
}
