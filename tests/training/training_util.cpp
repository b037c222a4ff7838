#include "tests/training/training_util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "train/safetensors.h"

namespace tenet::testing {

namespace fs = std::filesystem;

std::vector<LogRow> read_log(const std::string& path) {
  std::vector<LogRow> rows;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "epoch,step,split,loss,accuracy,lr,images_per_second,elapsed_seconds");
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (cells.size() != 8) {
      ADD_FAILURE() << "malformed log row: " << line;
      continue;
    }
    LogRow r;
    r.epoch = std::stoll(cells[0]);
    r.step = std::stoll(cells[1]);
    r.split = cells[2];
    r.loss = std::stod(cells[3]);
    r.accuracy = std::stod(cells[4]);
    r.lr = std::stod(cells[5]);
    r.line = cells[0] + "," + cells[1] + "," + cells[2] + "," + cells[3] + "," + cells[4] + "," +
             cells[5];
    rows.push_back(r);
  }
  return rows;
}

train::NamedTensors checkpoint_parameters(const std::string& path) {
  train::NamedTensors params;
  for (train::NamedTensor& t : train::read_safetensors(path).tensors)
    if (!t.name.starts_with("optimizer/") && !t.name.starts_with("train/"))
      params.push_back(std::move(t));
  return params;
}

std::string gemm_library_options() {
  std::string options;
  for (const auto& [variable, option] :
       {std::pair{"TENET_DNNL_LIBRARY", "TENET_DNNL"}, {"TENET_BLAS_LIBRARY", "TENET_BLAS"}}) {
    const char* value = std::getenv(variable);
    if (value && *value)
      options += std::string(" -D") + option + "=" +
                 (std::string(value) == "none" ? std::string("NONE") : value);
  }
  return options;
}

void Training::SetUp() {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  dir_ = fs::temp_directory_path() / ("tenet-training-" + std::to_string(::getpid()) + "-" +
                                      test->test_suite_name() + "-" + test->name());
  fs::remove_all(dir_);
  fs::create_directories(dir_);
}

void Training::TearDown() {
  fs::remove_all(dir_);
}

CommandResult Training::tenet(const std::string& args) const {
  return run_command("cd " + source_path("") + " && OMP_NUM_THREADS=1 " + tenet_binary() + " " +
                     args);
}

std::string Training::write(const std::string& name, const std::string& text) const {
  std::ofstream(dir_ / name) << text;
  return path(name);
}

KilledRun run_and_kill_at(const std::vector<std::string>& args, const std::string& marker) {
  int fds[2];
  KilledRun run;
  if (::pipe(fds) != 0) {
    ADD_FAILURE() << "pipe() failed";
    return run;
  }
  std::string binary = tenet_binary();
  std::vector<std::string> argv_text = {binary};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string source = source_path("");

  pid_t pid = ::fork();
  if (pid == 0) {  // the child: stdout into the pipe, stderr discarded
    ::dup2(fds[1], STDOUT_FILENO);
    int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDERR_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    if (::chdir(source.c_str()) != 0) ::_exit(127);
    ::setenv("OMP_NUM_THREADS", "1", 1);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) {
    run.out.append(buf, size_t(n));
    if (run.out.find(marker) != std::string::npos) {
      ::kill(pid, SIGKILL);
      run.killed = true;
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (run.killed) {
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "the run ended before it was killed:\n"
        << run.out;
  }
  return run;
}

}  // namespace tenet::testing
