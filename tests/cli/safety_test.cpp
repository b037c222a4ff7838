// The command line leaves nothing behind and overwrites nothing it was not
// asked to: a signal during a JIT compile ends the compiler too, `emit`
// refuses to replace files without --overwrite; a bad environment (compiler,
// BLAS library, JIT cache) is a user error, exit status 1.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "support/temp_files.h"
#include "tests/cli/cli_util.h"
#include "tests/support/processes.h"

namespace fs = std::filesystem;
using tenet::testing::Cli;
using tenet::testing::CommandResult;
using tenet::testing::pid_in;
using tenet::testing::read_file;
using tenet::testing::run_command;
using tenet::testing::tenet_binary;
using tenet::testing::wait_for;

namespace {

/// Starts `tenet args...` with extra environment variables and the fatal
/// signals at their defaults; returns its pid.
pid_t start_tenet(const std::vector<std::string>& args,
                  const std::vector<std::pair<std::string, std::string>>& env) {
  std::vector<std::string> text = {tenet_binary()};
  text.insert(text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : text) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::signal(sig, SIG_DFL);
    ::freopen("/dev/null", "w", stdout);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

}  // namespace

TEST_F(Cli, FatalSignalsDuringACompileEndTheCompilerAndItsChildren) {
  // A "compiler" that records its pid and that of a child, then waits.
  const std::string cxx = write("slow-c++", tenet::testing::kSlowCompilerScript);
  ::chmod(cxx.c_str(), 0755);
  const std::string program =
      write("scale.tn", "def scale(float(N) x) -> (y) {\n  y(i) = 2 * x(i)\n}\n");
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    SCOPED_TRACE(strsignal(sig));
    const fs::path run_dir = dir_ / ("run-" + std::to_string(sig));
    fs::create_directories(run_dir);
    const pid_t tenet = start_tenet({"run", program, "--backend", "cpp", "--sizes", "N=4"},
                                    {{"TENET_CXX", cxx},
                                     {"TENET_CACHE_DIR", (run_dir / "cache").string()},
                                     {"TENET_TEST_DIR", run_dir.string()}});
    ASSERT_TRUE(wait_for([&] { return pid_in(run_dir / "compiler.pid") > 0; }, 60))
        << "the compiler did not start";
    const long compiler = pid_in(run_dir / "compiler.pid");
    const long child = pid_in(run_dir / "child.pid");
    ASSERT_TRUE(tenet::process_is_running(compiler));
    ASSERT_TRUE(tenet::process_is_running(child));

    ::kill(tenet, sig);
    int status = 0;
    ::waitpid(tenet, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig)
        << "tenet did not end by the signal: status " << status;
    EXPECT_TRUE(wait_for([&] { return !tenet::process_is_running(compiler); }, 10))
        << "the compiler (pid " << compiler << ") outlived tenet";
    EXPECT_TRUE(wait_for([&] { return !tenet::process_is_running(child); }, 10))
        << "the compiler's child (pid " << child << ") outlived tenet";
    ::kill(pid_t(compiler), SIGKILL);  // in case the test failed
    ::kill(pid_t(child), SIGKILL);
  }
}

TEST_F(Cli, EmitRefusesToOverwriteFilesWithoutOverwrite) {
  write("squash.tn", "def squash(float(N) s) -> (v) {\n  v(n) = s(n) / (1 + s(n) * s(n))\n}\n");
  fs::create_directories(dir_ / "out");  // with a file of the user's
  write("out/notes.txt", "mine");
  CommandResult r = run_in_dir("emit squash.tn --target cpp -o out");
  ASSERT_EQ(r.exit_code, 0) << r.err;  // other files do not matter
  EXPECT_EQ(read_file((dir_ / "out/notes.txt").string()), "mine");

  write("out/README.md", "my notes on the kernel");
  r = run_in_dir("emit squash.tn --target cpp -o out");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("error: 'out' already holds tenet_squash.h, tenet_squash.cpp, "),
            std::string::npos)
      << r.err;
  // Eight names, then a count (the runtime headers come first; README.md is among the rest).
  EXPECT_NE(r.err.find("more files, which emit would overwrite: choose another folder, or allow "
                       "overwriting (tenet emit --overwrite)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(read_file((dir_ / "out/README.md").string()), "my notes on the kernel");

  r = run_in_dir("emit squash.tn --target cpp -o out --overwrite");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read_file((dir_ / "out/README.md").string()), "my notes on the kernel");
}

TEST_F(Cli, BadCompilerIsAUserErrorNamingTenetCxx) {
  write("scale.tn", "def scale(float(N) x) -> (y) {\n  y(i) = 2 * x(i)\n}\n");
  CommandResult r = run_command("cd " + dir_.string() + " && TENET_CXX=/nonexistent/c++ " +
                                tenet_binary() + " run scale.tn --backend cpp --sizes N=3");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err,
            "error: the C++ compiler '/nonexistent/c++' (TENET_CXX) does not exist; set "
            "TENET_CXX to a C++17 compiler such as g++\n");
  r = run_command("cd " + dir_.string() + " && TENET_CXX=/bin/true " + tenet_binary() +
                  " run scale.tn --backend cpp --sizes N=3");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("error: the C++ compiler '/bin/true' (TENET_CXX) exited with status 0 "
                       "but wrote no library"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("bug in Tenet"), std::string::npos) << r.err;
}

// Each JIT setting named wrongly is the user's to fix: the message names the
// setting and says what to set, never "a bug in Tenet".
TEST_F(Cli, WrongJitSettingsAreUserErrorsNamingTheSetting) {
  const std::string fake = write("libfake.so", "not a library");
  ::chmod(fake.c_str(), 0644);
  const std::string empty_dir = (dir_ / "empty").string();
  fs::create_directories(empty_dir);
  const std::string zlib = "/usr/lib/x86_64-linux-gnu/libz.so.1";
  const std::string run = "run models/matmul.tn --backend cpp --sizes M=64,K=64,N=64";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"TENET_RUNTIME_DIR=" + empty_dir,
       "error: the runtime headers folder '" + empty_dir + "' (TENET_RUNTIME_DIR) has no "},
      {"TENET_BLAS_LIBRARY=" + fake,
       "error: the BLAS library '" + fake + "' (TENET_BLAS_LIBRARY) is not a shared library"},
      {"TENET_DNNL_LIBRARY=" + fake,
       "error: the oneDNN library '" + fake + "' (TENET_DNNL_LIBRARY) is not a shared library"},
      {"TENET_DNNL_LIBRARY=none TENET_BLAS_LIBRARY=" + zlib,
       "lacks the functions it calls. Set TENET_BLAS_LIBRARY to a CBLAS shared library"},
  };
  for (const auto& [settings, want] : cases) {
    if (settings.find(zlib) != std::string::npos && !fs::exists(zlib)) continue;
    CommandResult r =
        run_in_source(run, settings + " TENET_CACHE_DIR=" + (dir_ / "cache").string());
    EXPECT_EQ(r.exit_code, 1) << settings << "\n" << r.err;
    EXPECT_NE(r.err.find(want), std::string::npos) << settings << "\n" << r.err;
    EXPECT_EQ(r.err.find("bug in Tenet"), std::string::npos) << settings << "\n" << r.err;
  }
}

TEST_F(Cli, UnwritableJitCacheIsAUserError) {
  write("scale.tn", "def scale(float(N) x) -> (y) {\n  y(i) = 2 * x(i)\n}\n");
  CommandResult r =
      run_command("cd " + dir_.string() + " && TENET_CACHE_DIR=/proc/tenet-test-cache " +
                  tenet_binary() + " run scale.tn --backend cpp --sizes N=3");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err,
            "error: cannot create the folder '/proc/tenet-test-cache' (No such file or "
            "directory); set TENET_CACHE_DIR to a folder you can write\n");
}

TEST_F(Cli, BlasLibraryWritableByOthersIsRefused) {
  // Any file will do: it is refused before anything links it.
  const std::string blas = write("libcblas.so", "not a library");
  ::chmod(blas.c_str(), 0666);
  CommandResult r = run_in_source("run models/matmul.tn --backend cpp --sizes M=64,K=64,N=64",
                                  "TENET_BLAS_LIBRARY=" + blas);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("error: refusing to link the BLAS library '" + blas +
                       "' (TENET_BLAS_LIBRARY): '" + blas + "' (owner "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("mode 0666) is writable by users other than its owner"), std::string::npos)
      << r.err;
}
