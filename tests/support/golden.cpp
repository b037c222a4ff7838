#include "tests/support/golden.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tenet::testing {

std::string source_path(const std::string& relative) {
  return std::string(TENET_SOURCE_DIR) + "/" + relative;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

static std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

void expect_golden(const std::string& name, const std::string& actual) {
  expect_golden_file("tests/golden/" + name, actual);
}

void expect_golden_file(const std::string& name, const std::string& actual) {
  namespace fs = std::filesystem;
  std::string path = source_path(name);
  const char* update = std::getenv("TENET_UPDATE_GOLDENS");
  if (update && std::string(update) == "1") {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  if (!fs::exists(path)) {
    ADD_FAILURE() << "golden file " << path
                  << " does not exist; run with TENET_UPDATE_GOLDENS=1 to create it. Actual:\n"
                  << actual;
    return;
  }
  std::string expected = read_file(path);
  if (expected == actual) return;
  fs::path tmp = fs::temp_directory_path() / ("tenet-golden-" + std::to_string(::getpid()));
  { std::ofstream(tmp, std::ios::binary) << actual; }
  CommandResult diff =
      run_command("diff -u " + shell_quote(path) + " " + shell_quote(tmp.string()));
  fs::remove(tmp);
  ADD_FAILURE() << "output differs from golden " << name
                << " (rerun with TENET_UPDATE_GOLDENS=1 to accept):\n"
                << diff.out;
}

CommandResult run_command(const std::string& command) {
  namespace fs = std::filesystem;
  static int counter = 0;
  fs::path err_path = fs::temp_directory_path() /
                      ("tenet-cmd-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::string full = command + " 2>" + shell_quote(err_path.string());
  CommandResult r{-1, "", ""};
  FILE* pipe = ::popen(full.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_file(err_path.string());
  fs::remove(err_path);
  return r;
}

std::string tenet_binary() {
  if (const char* b = std::getenv("TENET_BIN")) return b;
  return std::string(TENET_BINARY_DIR) + "/tools/tenet";
}

}  // namespace tenet::testing
