// Bad input of every kind the command line takes is a user error (exit 1,
// "error: ..." or "file:line:col: error: ...", stdout empty) or works: never
// "this is a bug in Tenet" (exit 2) or a crash. Each case was one of those.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "tests/cli/cli_util.h"

namespace fs = std::filesystem;
using tenet::testing::Cli;
using tenet::testing::CommandResult;

namespace {

const char* kProduct = R"(def f(float(N) x, float(N) w) -> (loss) {
  y(i) = x(i) * w(i)
  loss +=! y(i) * y(i)
}
)";

struct ErrorCase {
  std::string args;
  std::string err;  // the first line of stderr
};

class UserErrors : public Cli {
 protected:
  void expect_user_error(const ErrorCase& c) {
    SCOPED_TRACE("tenet " + c.args);
    CommandResult r = run_in_dir(c.args);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_EQ(r.err.substr(0, r.err.find('\n')), c.err) << r.err;
    EXPECT_EQ(r.err.find("bug in Tenet"), std::string::npos) << r.err;
  }
};

}  // namespace

// An empty file has no function to emit; a directory is no source file
// (an ifstream reads it as an empty file).
TEST_F(UserErrors, EmptyFileOrDirectoryAsTheSource) {
  write("empty.tn", "");
  fs::create_directory(dir_ / "folder.tn");
  const ErrorCase cases[] = {
      {"emit empty.tn -o out", "error: empty.tn defines no function"},
      {"print empty.tn --stage cpp", "error: empty.tn defines no function"},
      {"print empty.tn --stage ir", "error: empty.tn defines no function"},
      {"print empty.tn --stage source", "error: empty.tn defines no function"},
      {"run empty.tn", "error: empty.tn defines no function"},
      {"run empty.tn --grad", "error: empty.tn defines no function"},
      {"gradcheck empty.tn", "error: empty.tn defines no function"},
      {"print empty.tn --grad f", "error: no function 'f' in empty.tn (functions: )"},
  };
  for (const ErrorCase& c : cases) expect_user_error(c);
  EXPECT_FALSE(fs::exists(dir_ / "out"));
  for (const char* cmd : {"check", "print", "print --stage cpp", "print --stage parse", "run",
                          "run --grad", "gradcheck", "emit -o out", "print --grad f"})
    expect_user_error(
        {std::string(cmd) + " folder.tn", "error: cannot open 'folder.tn': it is a directory"});
  // An empty program is still a valid one to check.
  CommandResult r = run_in_dir("check empty.tn");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "empty.tn: ok\n");
}

// Found by the second hostile-input round: /dev/zero as a source or an
// input was read until memory ran out ("internal error", exit 2), and a
// FIFO would block. Only regular files are read; the rest are named.
TEST_F(UserErrors, SpecialFilesAreRefusedNotReadWithoutEnd) {
  write("f.tn", kProduct);
  fs::create_symlink("/dev/zero", dir_ / "zero.tn");
  ASSERT_EQ(::mkfifo((dir_ / "fifo.tn").c_str(), 0644), 0);
  fs::create_directories(dir_ / "in");
  fs::create_symlink("/dev/zero", dir_ / "in/x.npy");
  const std::string device = "it is a character device, not a regular file";
  const ErrorCase cases[] = {
      {"check /dev/zero", "error: cannot open '/dev/zero': " + device},
      {"run /dev/zero", "error: cannot open '/dev/zero': " + device},
      {"check zero.tn", "error: cannot open 'zero.tn': " + device},
      {"check fifo.tn", "error: cannot open 'fifo.tn': it is a FIFO, not a regular file"},
      {"run f.tn --sizes N=3 --inputs in", "error: cannot read 'in/x.npy': " + device},
  };
  for (const ErrorCase& c : cases) expect_user_error(c);
}

// --save DIR is created before anything runs: a path that cannot be a
// folder fails first, with no output lost after a long run.
TEST_F(UserErrors, SaveToAPathThatCannotBeAFolder) {
  write("f.tn", kProduct);
  write("file", "");
  const ErrorCase cases[] = {
      {"run f.tn --sizes N=3 --save file",
       "error: --save: cannot create the folder 'file': Not a directory"},
      {"run f.tn --sizes N=3 --save file/sub",
       "error: --save: cannot create the folder 'file/sub': Not a directory"},
      {"run f.tn --sizes N=3 --grad --save file",
       "error: --save: cannot create the folder 'file': Not a directory"},
      {"run f.tn --sizes N=3 --save ''",
       "error: --save: cannot create the folder '': Invalid argument"},
  };
  for (const ErrorCase& c : cases) {
    expect_user_error(c);
    EXPECT_TRUE(run_in_dir(c.args).out.empty());
  }
  CommandResult r = run_in_dir("run f.tn --sizes N=3 --grad --save out/nested");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"loss", "d_x", "d_w"})
    EXPECT_TRUE(fs::exists(dir_ / "out/nested" / (std::string(name) + ".npy"))) << name;
}

TEST_F(UserErrors, BadSizesSeedsAndInputs) {
  write("f.tn", kProduct);
  write("file", "");
  fs::create_directories(dir_ / "in/x.npy");
  const ErrorCase cases[] = {
      // 2^64: strtoll clamped it to 2^63 - 1 silently (and the run crashed).
      {"run f.tn --sizes N=18446744073709551616",
       "error: --sizes: N=18446744073709551616 is too large (at most 2^63 - 1)"},
      {"run f.tn --sizes N=3,N=4", "error: --sizes: N is given twice"},
      {"run f.tn --sizes N=+3", "error: --sizes: '+3' is not a non-negative integer (for N)"},
      {"run f.tn --sizes 'N= 3'", "error: --sizes: ' 3' is not a non-negative integer (for N)"},
      {"run f.tn --sizes =3", "error: --sizes expects NAME=VALUE[,NAME=VALUE...], got '=3'"},
      // strtoull took "-1" as 2^64 - 1.
      {"run f.tn --sizes N=3 --seed -1", "error: --seed expects an integer"},
      {"run f.tn --sizes N=3 --seed 18446744073709551616",
       "error: --seed: 18446744073709551616 is too large (at most 2^64 - 1)"},
      {"gradcheck f.tn --sizes N=3 --seed ' 1'", "error: --seed expects an integer"},
      {"run f.tn --inputs missing",
       "error: cannot read 'missing/x.npy': No such file or directory"},
      {"run f.tn --inputs file", "error: cannot read 'file/x.npy': Not a directory"},
      {"run f.tn --inputs in", "error: cannot read 'in/x.npy': it is a directory"},
      {"run f.tn --sizes N=3 --fn g", "error: no function 'g' in f.tn (functions: f)"},
      {"run f.tn --sizes N=3 --grad --wrt v",
       "f.tn:1:1: error: function 'f' has no input named 'v' (inputs: x, w)"},
      {"gradcheck f.tn --sizes N=3 --output v",
       "f.tn:1:1: error: function 'f' has no output named 'v' (outputs: loss)"},
      {"gradcheck f.tn --sizes N=3 --tolerance nan",
       "error: --tolerance expects a positive number"},
      {"run f.tn --sizes N=3 --backend gpu",
       "error: unknown target 'gpu' (targets: cpp, cuda-emulated, cuda)"},

  };
  for (const ErrorCase& c : cases) expect_user_error(c);
}

// --backend cuda on a machine without a GPU (or its driver, or the CUDA
// runtime) is a user error naming what is missing and the backend that runs
// the same kernels without one; with a GPU it runs and agrees with the CPU.
TEST_F(UserErrors, CudaWithoutAGpuSaysWhatIsMissing) {
  write("f.tn", kProduct);
  const CommandResult cuda = run_in_dir("run f.tn --sizes N=3 --backend cuda");
  if (cuda.exit_code == 0) {
    const CommandResult cpp = run_in_dir("run f.tn --sizes N=3 --backend cpp");
    EXPECT_EQ(cuda.out.substr(cuda.out.find('\n')), cpp.out.substr(cpp.out.find('\n')));
    return;
  }
  EXPECT_EQ(cuda.exit_code, 1) << cuda.err;
  EXPECT_EQ(cuda.err.rfind("error: ", 0), 0u) << cuda.err;
  EXPECT_NE(cuda.err.find("`--backend cuda-emulated`"), std::string::npos) << cuda.err;
  EXPECT_TRUE(cuda.out.empty());
}

// A value that reaches the loss only through `* 0` has a zero gradient
// (AD stopped with the internal error "no adjoint for t").
TEST_F(UserErrors, GradientOfAValueTimesZero) {
  write("zero.tn", R"(def f(float(N) x, float(N) w) -> (loss) {
  t(i) = x(i) * w(i)
  y(i) = t(i) * 0
  loss +=! y(i) + w(i)
}
)");
  CommandResult r = run_in_dir("gradcheck zero.tn --sizes N=3");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\ngradcheck f: ok\n"), std::string::npos) << r.out;
  r = run_in_dir("run zero.tn --grad --sizes N=3");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("gradient d_x: float32[3]\n  checksum: 0 0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gradient d_w: float32[3]\n  checksum: 3 3\n"), std::string::npos) << r.out;
}

// NaN compares false with everything: gradcheck said "ok" when the loss or
// its finite differences were NaN.
TEST_F(UserErrors, GradcheckFailsOnANaNLoss) {
  // Random inputs are in [-1, 1): log of the negative ones is NaN.
  write("log.tn", "def f(float(N) x) -> (loss) {\n  loss +=! log(x(i))\n}\n");
  CommandResult r = run_in_dir("gradcheck log.tn --sizes N=4");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("\nerror: the checked function is nan at the inputs: finite differences "
                       "of it mean nothing (inputs outside its domain?)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find("\nerror: loss: not finite at flat index 0: compiled nan, interpreted nan\n"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\ngradcheck f: FAILED\n"), std::string::npos) << r.out;
}
