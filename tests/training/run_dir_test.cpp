// What `tenet train` does to its run directory: it overwrites no file of the
// user's without --overwrite, says so when it cannot write there, removes
// the checkpoint temporaries of killed runs, refuses a folder another run
// is using, and a fatal signal during the model's compile ends the compiler
// too.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "support/temp_files.h"
#include "tests/support/processes.h"
#include "tests/training/training_util.h"

namespace tenet::testing {
namespace {

namespace fs = std::filesystem;

const char* kQuickRun =
    "train models/mlp.tn --epochs 1 --batch 10 --limit-train 20 --limit-test 10 ";

TEST_F(Training, OutOverAUsersFilesIsRefusedWithoutOverwrite) {
  fs::create_directories(path("run"));
  write("run/log.csv", "my measurements\n");
  CommandResult r = tenet(std::string(kQuickRun) + "--out " + path("run"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.err, "error: " + path("run") +
                       " already holds log.csv, which the run would overwrite: choose another "
                       "--out, or --overwrite\n");
  EXPECT_EQ(read_file(path("run/log.csv")), "my measurements\n");

  write("run/model.tn", "# my model\n");
  r = tenet(std::string(kQuickRun) + "--out " + path("run"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("already holds log.csv and model.tn, which the run would overwrite"),
            std::string::npos)
      << r.err;

  r = tenet(std::string(kQuickRun) + "--out " + path("run") + " --overwrite");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(read_log(path("run/log.csv")).back().split, "test");

  // Resuming in the run's own folder continues it; in another folder that
  // holds files, it is refused as a new run would be.
  r = tenet("train models/mlp.tn --resume " + path("run") + " --epochs 2");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  fs::create_directories(path("elsewhere"));
  write("elsewhere/log.csv", "mine\n");
  r = tenet("train models/mlp.tn --resume " + path("run") + " --epochs 3 --out " +
            path("elsewhere"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(read_file(path("elsewhere/log.csv")), "mine\n");
}

TEST_F(Training, UnwritableOutIsAUserError) {
  CommandResult r = tenet(std::string(kQuickRun) + "--out /proc/tenet-test-run");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("error: cannot create the run directory /proc/tenet-test-run: "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("; choose another --out"), std::string::npos) << r.err;

  write("file", "");  // --out naming a file
  r = tenet(std::string(kQuickRun) + "--out " + path("file"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("error: cannot create the run directory " + path("file")), std::string::npos)
      << r.err;
}

// Found by the second hostile-input round: two runs started together with
// the same --out both ran and interleaved log.csv. A run holds an flock on
// RUNDIR/.lock; here the test holds it, as a running run would, and the
// second run fails at once, writing nothing. Once it is free, runs go on.
TEST_F(Training, ARunDirectoryInUseByAnotherRunIsRefused) {
  fs::create_directories(path("run"));
  const int fd = ::open(path("run/.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  CommandResult r = tenet(std::string(kQuickRun) + "--out " + path("run"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.err, "error: another run is writing to the run directory " + path("run") +
                       " (it holds " + path("run/.lock") +
                       "); wait for it to end or choose another --out\n");
  EXPECT_FALSE(fs::exists(path("run/log.csv")));
  EXPECT_FALSE(fs::exists(path("run/model.tn")));
  ::close(fd);
}

TEST_F(Training, CheckpointTemporariesOfKilledRunsAreRemoved) {
  fs::create_directories(path("run"));
  // A finished child's pid: a process that no longer runs.
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const std::string prefix = tenet::temporary_prefix(path("run/last.safetensors"));
  const std::string ours = std::to_string(::getpid()) + ".";
  ASSERT_EQ(prefix.substr(prefix.size() - ours.size()), ours);
  const std::string host_prefix = prefix.substr(0, prefix.size() - ours.size());
  const std::string stale = host_prefix + std::to_string(dead) + ".a1b2c3";
  const std::string live = host_prefix + std::to_string(::getpid()) + ".d4e5f6";
  const std::string other_host =
      path("run/last.safetensors.tmp.otherhost.") + std::to_string(dead) + ".g7h8i9";
  for (const std::string& file : {stale, live, other_host}) write(fs::path(file).filename(), "");
  for (const std::string& file : {stale, live, other_host})
    fs::rename(path(fs::path(file).filename()), file);

  CommandResult r = tenet(std::string(kQuickRun) + "--out " + path("run"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(fs::exists(stale)) << "a dead run's temporary is left";
  EXPECT_TRUE(fs::exists(live)) << "a running process's temporary was removed";
  EXPECT_TRUE(fs::exists(other_host)) << "another host's temporary was removed";
  EXPECT_TRUE(fs::exists(path("run/last.safetensors")));
}

TEST_F(Training, SigtermDuringTheModelsCompileEndsTheCompiler) {
  const std::string cxx = write("slow-c++", kSlowCompilerScript);
  ::chmod(cxx.c_str(), 0755);
  const pid_t trainer = ::fork();
  if (trainer == 0) {
    ::setenv("TENET_CXX", cxx.c_str(), 1);
    ::setenv("TENET_CACHE_DIR", path("cache").c_str(), 1);
    ::setenv("TENET_TEST_DIR", dir_.c_str(), 1);
    ::signal(SIGTERM, SIG_DFL);
    if (!std::freopen("/dev/null", "w", stdout) || ::chdir(source_path("").c_str()) != 0)
      ::_exit(127);
    const std::string binary = tenet_binary(), out = path("run");
    ::execl(binary.c_str(), binary.c_str(), "train", "models/mlp.tn", "--limit-train", "20",
            "--limit-test", "10", "--out", out.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ASSERT_TRUE(wait_for([&] { return pid_in(path("compiler.pid")) > 0; }, 60))
      << "no compile started";
  const long compiler = pid_in(path("compiler.pid")), child = pid_in(path("child.pid"));
  ::kill(trainer, SIGTERM);
  int status = 0;
  ::waitpid(trainer, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "status " << status;
  EXPECT_TRUE(wait_for([&] { return !process_is_running(compiler); }, 60))
      << "the compiler outlived the trainer";
  EXPECT_TRUE(wait_for([&] { return !process_is_running(child); }, 60))
      << "the compiler's child outlived the trainer";
  ::kill(pid_t(compiler), SIGKILL);  // in case the test failed
  ::kill(pid_t(child), SIGKILL);
}

// Found by the second hostile-input round: a compile killed with Tenet left
// the compiler's temporary files in the user's $TMPDIR. The compiler runs
// with TMPDIR set to a folder in the cache entry; a killed compile leaves
// nothing in the user's, and the entry's next build removes the folder.
TEST_F(Training, AKilledCompileLeavesNothingInTheUsersTmpdir) {
  const std::string cxx = write("tmp-c++",
                                "#!/bin/sh\n"
                                "if [ \"$1\" = \"--version\" ]; then echo slow; exit 0; fi\n"
                                ": > \"$TMPDIR/ccTenetTest.s\"\n"
                                "echo \"$TMPDIR\" > \"$TENET_TEST_DIR/tmpdir\"\n"
                                "echo $$ > \"$TENET_TEST_DIR/compiler.pid\"\n"
                                "exec sleep 300\n");
  ::chmod(cxx.c_str(), 0755);
  fs::create_directories(path("usertmp"));
  const pid_t trainer = ::fork();
  if (trainer == 0) {
    ::setenv("TENET_CXX", cxx.c_str(), 1);
    ::setenv("TENET_CACHE_DIR", path("cache").c_str(), 1);
    ::setenv("TENET_TEST_DIR", dir_.c_str(), 1);
    ::setenv("TMPDIR", path("usertmp").c_str(), 1);
    ::signal(SIGTERM, SIG_DFL);
    if (!std::freopen("/dev/null", "w", stdout) || ::chdir(source_path("").c_str()) != 0)
      ::_exit(127);
    const std::string binary = tenet_binary(), out = path("run");
    ::execl(binary.c_str(), binary.c_str(), "train", "models/mlp.tn", "--limit-train", "20",
            "--limit-test", "10", "--out", out.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ASSERT_TRUE(wait_for([&] { return pid_in(path("compiler.pid")) > 0; }, 60))
      << "no compile started";
  const long compiler = pid_in(path("compiler.pid"));
  ::kill(trainer, SIGTERM);
  ::waitpid(trainer, nullptr, 0);
  EXPECT_TRUE(wait_for([&] { return !process_is_running(compiler); }, 60));
  ::kill(pid_t(compiler), SIGKILL);  // in case the test failed
  std::string tmpdir = read_file(path("tmpdir"));
  tmpdir.pop_back();  // the newline
  EXPECT_EQ(tmpdir.rfind(path("cache") + "/", 0), 0u) << tmpdir;
  EXPECT_TRUE(fs::is_empty(path("usertmp")));
  EXPECT_TRUE(fs::exists(tmpdir + "/ccTenetTest.s"));
  // The next build of the entry (any compiler: this one fails at once)
  // removes the killed process's folder.
  write("tmp-c++",
        "#!/bin/sh\nif [ \"$1\" = \"--version\" ]; then echo slow; exit 0; fi\nexit 1\n");
  CommandResult r = run_command("cd " + source_path("") + " && TENET_CXX=" + cxx +
                                " TENET_CACHE_DIR=" + path("cache") + " " + tenet_binary() +
                                " train models/mlp.tn --limit-train 20 --limit-test 10 --out " +
                                path("run2") + " 2>&1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(fs::exists(tmpdir)) << r.out;
}

}  // namespace
}  // namespace tenet::testing
