// End-to-end tests of the gradient commands: `tenet print --grad` (goldens
// of the readable backward for softmax, squash, convolutions, max-pooling
// and one routing iteration), `tenet run --grad` on both backends with
// bitwise-deterministic compiled gradients, and `tenet gradcheck` (its two
// tables, its exit status, its errors).
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "tests/cli/cli_util.h"

namespace fs = std::filesystem;
using tenet::testing::checksum_lines;
using tenet::testing::CommandResult;
using tenet::testing::expect_golden;
using tenet::testing::read_file;

namespace {

class GradCli : public tenet::testing::Cli {
 protected:
  /// The bytes of the .npy files `names` that `tenet <args> DIR` saves, run
  /// with environment `env` into the scratch folder `folder`.
  std::string saved_outputs(const std::string& args, const std::vector<std::string>& names,
                            const std::string& env, const std::string& folder) {
    SCOPED_TRACE(env);
    const std::filesystem::path out = dir_ / folder;
    tenet::testing::CommandResult r = run_in_source(args + out.string(), env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::string bytes;
    for (const std::string& n : names) {
      std::string b = tenet::testing::read_file((out / (n + ".npy")).string());
      EXPECT_GT(b.size(), 128u) << n;
      bytes += b;
    }
    return bytes;
  }
};

struct PrintCase {
  const char* args;
  const char* golden;
};

// The readable backward of the examples. Each golden was read by
// eye: gathers for the convolution inputs (guarded reads, no scatter), the
// argmax routing of max-pooling, `+=` where several reads contribute.
TEST_F(GradCli, PrintGradGoldens) {
  const PrintCase cases[] = {
      {"models/softmax.tn --grad softmax --vjp", "cli/grad_softmax.tn"},
      {"models/squash.tn --grad squash --vjp", "cli/grad_squash.tn"},
      {"models/conv2d.tn --grad conv2d --vjp", "cli/grad_conv2d.tn"},
      {"models/conv2d.tn --grad conv2d_stride2 --vjp", "cli/grad_conv2d_stride2.tn"},
      {"models/maxpool.tn --grad maxpool2x2 --vjp", "cli/grad_maxpool.tn"},
      {"tests/cli/data/routing_step.tn --grad routing_step --vjp", "cli/grad_routing_step.tn"},
      {"tests/cli/data/conv_loss.tn --grad conv_loss", "cli/grad_conv_loss.tn"},
  };
  for (const PrintCase& c : cases) {
    SCOPED_TRACE(c.args);
    CommandResult r = run_in_source("print " + std::string(c.args));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_golden(c.golden, r.out);
    // The printed program is a program: it checks.
    std::string file = write("grad.tn", r.out);
    CommandResult check = run_in_dir("check grad.tn");
    EXPECT_EQ(check.exit_code, 0) << check.err << r.out;
  }
}

TEST_F(GradCli, PrintGradStages) {
  CommandResult ir = run_in_source("print models/softmax.tn --grad softmax --vjp --stage ir");
  EXPECT_EQ(ir.exit_code, 0) << ir.err;
  EXPECT_EQ(ir.out.rfind("func softmax_grad[N, K](%z: float32[N, K], %d_p: float32[N, K])", 0), 0u)
      << ir.out;
  CommandResult cpp = run_in_source("print models/softmax.tn --grad softmax --vjp --stage cpp");
  EXPECT_EQ(cpp.exit_code, 0) << cpp.err;
  EXPECT_NE(cpp.out.find("void tenet_softmax_grad("), std::string::npos) << cpp.out;
  CommandResult source = run_in_source("print models/softmax.tn --grad softmax --vjp");
  EXPECT_EQ(source.out.rfind("def softmax_grad(float32(N, K) z, float32(N, K) d_p) -> (p, d_z)", 0),
            0u)
      << source.out;
  CommandResult wrt = run_in_source("print models/conv2d.tn --grad conv2d --vjp --wrt w");
  EXPECT_EQ(wrt.exit_code, 0) << wrt.err;
  EXPECT_NE(wrt.out.find("-> (out, d_w) {"), std::string::npos) << wrt.out;

  // The other stages: check shows softmax as the checker made it, ad the
  // gradient as AD derived it (as IR), a pass the gradient after it.
  CommandResult check = run_in_source("print models/softmax.tn --grad softmax --stage check");
  EXPECT_EQ(check.out.rfind("func softmax[N, K](%z: float32[N, K])", 0), 0u) << check.out;
  for (const char* stage : {"ad", "dce", "schedule"}) {
    CommandResult r =
        run_in_source("print models/softmax.tn --grad softmax --vjp --stage " + std::string(stage));
    EXPECT_EQ(r.out.rfind("func softmax_grad[N, K](%z: float32[N, K], %d_p: float32[N, K])", 0), 0u)
        << stage << ": " << r.out;
  }
  CommandResult parse = run_in_source("print models/softmax.tn --grad softmax --stage parse");
  EXPECT_NE(parse.out.find("def softmax(float32(N, K) z) -> (p) {"), std::string::npos)
      << parse.out;
  CommandResult stage = run_in_source("print models/softmax.tn --grad softmax --stage lower");
  EXPECT_EQ(stage.exit_code, 1);
  EXPECT_EQ(stage.err,
            "error: unknown stage 'lower' (stages: parse, check, retype, ad, simplify, dce, hoist, "
            "index_split, contraction, fuse, split, schedule, liveness, lower_gemm, lower_scatter, "
            "lower_conv, "
            "plan_memory, lower_loops, cpp)\n");
  CommandResult no_grad = run_in_source("print models/softmax.tn --vjp");
  EXPECT_EQ(no_grad.exit_code, 1);
  EXPECT_EQ(no_grad.err, "error: --wrt, --output and --vjp apply with --grad FN only\n");
  // The plain program printed back as source.
  CommandResult plain = run_in_source("print models/squash.tn --stage source");
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("n2(b, n) +=! s(b, n, d) * s(b, n, d)"), std::string::npos) << plain.out;
}

// The example: CapsNet's backward, through its one scalar output
// (the loss) by default, is readable source that checks.
TEST_F(GradCli, PrintCapsNetGradient) {
  CommandResult r = run_in_source("print models/capsnet.tn --grad capsnet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("def capsnet_grad(float32(B, 1, 28, 28) image, int32(B) label, ", 0), 0u)
      << r.out;
  EXPECT_NE(r.out.find("-> (lengths, reconstruction, loss, d_image, d_conv1_w, d_conv1_b, "
                       "d_primary_w, d_primary_b, d_W, d_dec1_w, d_dec1_b, d_dec2_w, d_dec2_b, "
                       "d_dec3_w, d_dec3_b) {"),
            std::string::npos);
  // The primary capsules' input gradient is a gather (stride 2) with a guard.
  EXPECT_NE(r.out.find("# ad: gather for relu1(b, c, 2*y + ky, 2*x + kx)\n"
                       "  d_relu1(b, c, y2, y3) +=! d_conv2(b, o, y, x) * "
                       "primary_w?(o, c, y2 - 2*y, y3 - 2*x)"),
            std::string::npos)
      << r.out;
  write("capsnet_grad.tn", r.out);
  CommandResult check = run_in_dir("check capsnet_grad.tn");
  EXPECT_EQ(check.exit_code, 0) << check.err;
}

TEST_F(GradCli, PrintGradErrors) {
  CommandResult r = run_in_source("print models/softmax.tn --grad softmax");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(r.err.rfind("models/softmax.tn:7:3: error: cannot differentiate non-scalar output 'p' "
                        "(float32[N, K]) without cotangents",
                        0),
            0u)
      << r.err;
  r = run_in_source("print models/softmax.tn --grad nope");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: no function 'nope' in models/softmax.tn (functions: softmax)\n");
}

TEST_F(GradCli, RunGradBothBackends) {
  const std::string args = "run models/squash.tn --grad --vjp --sizes B=2,N=3,D=4 --seed 7";
  CommandResult interp = run_in_source(args);
  ASSERT_EQ(interp.exit_code, 0) << interp.err;
  expect_golden("cli/run_grad_squash.txt", interp.out);
  CommandResult cpp = run_in_source(args + " --backend cpp --save " + (dir_ / "out").string());
  ASSERT_EQ(cpp.exit_code, 0) << cpp.err;
  EXPECT_NE(cpp.out.find("function squash_grad (backend cpp)"), std::string::npos) << cpp.out;
  // The same checksums to 9 significant digits (float32 on both sides).
  EXPECT_EQ(checksum_lines(interp.out), checksum_lines(cpp.out));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "v.npy"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "d_s.npy"));
  // The forward outputs are those of plain `run` with the same seed.
  CommandResult plain = run_in_source("run models/squash.tn --sizes B=2,N=3,D=4 --seed 7");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(checksum_lines(interp.out).rfind(checksum_lines(plain.out), 0), 0u);

  CommandResult bad = run_in_source("run models/squash.tn --grad --sizes B=2,N=3,D=4");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("cannot differentiate non-scalar output 'v'"), std::string::npos)
      << bad.err;
}

// Compiled gradients of a convolution and reductions, large enough that
// every statement runs in parallel, are bitwise the same from run to run
// and for 1 and 2 threads.
TEST_F(GradCli, CompiledGradientsAreDeterministic) {
  const std::string args =
      "run tests/cli/data/conv_loss.tn --grad --backend cpp --seed 3 "
      "--sizes B=2,C=4,H=16,W=16,O=8,K=3 --save ";
  const std::vector<std::string> names = {"loss", "d_x", "d_w", "d_bias"};
  const char* envs[] = {"OMP_NUM_THREADS=1", "OMP_NUM_THREADS=2", "OMP_NUM_THREADS=2",
                        "OMP_NUM_THREADS=1"};
  const std::string first = saved_outputs(args, names, envs[0], "run0");
  for (int k = 1; k < 4; ++k)
    EXPECT_TRUE(saved_outputs(args, names, envs[k], "run" + std::to_string(k)) == first)
        << "run " << k << " (" << envs[k] << ") differs from run 0";
}

// Contractions through the GEMM library (oneDNN where installed, which at
// 2 threads splits the sum over K of a 256 x 256 x 4096 product unless told
// not to: runtime/tenet_gemm.h), the products of a long sum and of a wide
// one with their gradients: bitwise the same for 1 and 2 threads.
TEST_F(GradCli, GemmResultsAreTheSameAtAnyThreadCount) {
  for (const char* program : {"models/matmul.tn", "tests/cli/data/matmul_nt.tn"})
    for (const char* sizes : {"M=256,K=4096,N=256", "M=64,K=9216,N=128", "M=600,K=64,N=700"}) {
      SCOPED_TRACE(std::string(program) + " " + sizes);
      const std::string args = std::string("run ") + program +
                               " --grad --vjp --backend cpp --seed 4 --sizes " + sizes + " --save ";
      const std::vector<std::string> names = {"c", "d_a", "d_b"};
      // The tiles and slices are cut for this machine's cores, and for a
      // 16- and a 64-core machine's (TENET_PARALLEL_CORES): 5 threads share
      // them unevenly.
      for (const std::string cores : {"", "TENET_PARALLEL_CORES=16 ", "TENET_PARALLEL_CORES=64 "}) {
        SCOPED_TRACE(cores);
        const auto one = saved_outputs(args, names, cores + "OMP_NUM_THREADS=1", "one");
        EXPECT_TRUE(one == saved_outputs(args, names, cores + "OMP_NUM_THREADS=2", "two"));
        EXPECT_TRUE(one == saved_outputs(args, names, cores + "OMP_NUM_THREADS=5", "five"));
      }
    }
}

// The scatter-add gradients of data-dependent reads (lower/scatter.h),
// large enough to run in parallel, with many contributions per element
// (indices in [0, 10)): bitwise the same for 1 and 2 threads (and the same
// as CompiledGradientsAreDeterministic checks for dense gradients).
TEST_F(GradCli, ScatterGradientsAreTheSameAtAnyThreadCount) {
  const std::string args =
      "run models/zoo/tc_gather.tn --grad --vjp --backend cpp --seed 5 "
      "--sizes V=12,J=70,N=400,K=8,R=16 --save ";
  const std::vector<std::string> names = {"d_LUT", "d_W", "d_s", "d_X", "d_taps", "d_A"};
  EXPECT_TRUE(saved_outputs(args, names, "OMP_NUM_THREADS=1", "one") ==
              saved_outputs(args, names, "OMP_NUM_THREADS=2", "two"))
      << "2 threads differ from 1";
}

TEST_F(GradCli, GradcheckPasses) {
  CommandResult r =
      run_in_source("gradcheck tests/cli/data/conv_loss.tn --sizes B=2,C=2,H=6,W=5,O=3,K=3");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("gradcheck conv_loss: interpreter (float64) against central differences\n"
                        "input             entries  max abs err  max rel err  pass\n",
                        0),
            0u)
      << r.out;
  // One row per input (entries: every one), one per output and gradient.
  for (const char* row : {"x +120 .* yes\n", "w +54 .* yes\n", "bias +3 .* yes\n", "loss .* yes\n",
                          "d_x .* yes\n", "d_w .* yes\n", "d_bias .* yes\n"})
    EXPECT_TRUE(std::regex_search(r.out, std::regex(std::string("\n") + row))) << row << r.out;
  EXPECT_NE(r.out.find("compiled (C++, float32) against the interpreter (float32)\n"
                       "output/gradient   max abs err   rel to max  pass\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\ngradcheck conv_loss: ok\n"), std::string::npos) << r.out;
  // Step 2 on the CUDA target's kernels, emulated on the CPU (docs/cuda.md).
  CommandResult emulated =
      run_in_source("gradcheck models/softmax.tn --vjp --sizes N=3,K=4 --backend cuda-emulated");
  EXPECT_EQ(emulated.exit_code, 0) << emulated.out << emulated.err;
  EXPECT_NE(emulated.out.find("compiled (cuda-emulated, float32) against the interpreter"),
            std::string::npos)
      << emulated.out;

  r = run_in_source("gradcheck models/softmax.tn --vjp --sizes N=3,K=4 --max-entries 5");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\nz +5 .* yes\n"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\nd_z .* yes\n"))) << r.out;
}

TEST_F(GradCli, GradcheckFailureExitsNonZero) {
  // No finite difference agrees with AD to 1e-30: every input fails.
  CommandResult r =
      run_in_source("gradcheck tests/cli/data/xent.tn --sizes B=2,K=3 --tolerance 1e-30");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\nlogits +6 .* NO\n"))) << r.out;
  EXPECT_NE(r.out.find("\ngradcheck xent: FAILED\n"), std::string::npos) << r.out;
}

TEST_F(GradCli, GradcheckErrors) {
  struct ErrorCase {
    const char* args;
    const char* err;  // the first line of stderr
  };
  const ErrorCase cases[] = {
      {"models/softmax.tn --sizes N=2,K=3",
       "models/softmax.tn:7:3: error: cannot differentiate non-scalar output 'p' (float32[N, K]) "
       "without cotangents: reduce it to a scalar, or ask for vector-Jacobian products"},
      {"tests/cli/data/xent.tn --sizes B=2,K=3 --wrt label",
       "tests/cli/data/xent.tn:3:30: error: cannot differentiate with respect to integer input "
       "'label' (int32[B])"},
      {"tests/cli/data/xent.tn --sizes B=2,K=3 --fn nope",
       "error: no function 'nope' in tests/cli/data/xent.tn (functions: xent)"},
      {"tests/cli/data/xent.tn --sizes B=2,K=3 --wrt logits,nope",
       "tests/cli/data/xent.tn:3:1: error: function 'xent' has no input named 'nope' (inputs: "
       "logits, label)"},
      {"tests/cli/data/xent.tn --sizes B=2,K=3 --output nope",
       "tests/cli/data/xent.tn:3:1: error: function 'xent' has no output named 'nope' (outputs: "
       "loss)"},
      {"tests/cli/data/xent.tn --sizes B=2",
       "error: size parameter 'K' of input 'logits' is not bound; give it with --sizes K=..."},
      {"tests/cli/data/xent.tn --sizes B=2,K=3 --max-entries x",
       "error: --max-entries expects a non-negative integer"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.args);
    CommandResult r = run_in_source("gradcheck " + std::string(c.args));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(r.err.substr(0, r.err.find('\n')), c.err) << r.err;
  }
}

}  // namespace

TEST_F(GradCli, PrintWithStaticSizes) {
  // The sizes compiled in: constant shapes, no size parameter left, through AD too.
  write("squash.tn",
        "def squash(float(B, N, D) s) -> (v) {\n"
        "  n2(b, n) +=! s(b, n, d) * s(b, n, d)\n"
        "  v(b, n, d) = s(b, n, d) * sqrt(n2(b, n) + 1e-7) / (1 + n2(b, n))\n"
        "}\n");
  CommandResult r = run_in_dir("print squash.tn --stage retype --static-sizes B=2,N=3,D=4");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("func squash(%s: float32[2, 3, 4])"), std::string::npos) << r.out;
  r = run_in_dir("print squash.tn --grad squash --vjp --static-sizes B=2 --stage ad");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("func squash_grad[N, D](%s: float32[2, N, D]"), std::string::npos) << r.out;
  r = run_in_dir("print squash.tn --static-sizes Q=2");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("'squash' has no size parameter 'Q' (its size parameters: B, N, D)"),
            std::string::npos)
      << r.err;
  r = run_in_dir("print squash.tn --static-sizes B=-2");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("--static-sizes: '-2' is not a non-negative integer"), std::string::npos)
      << r.err;
}
