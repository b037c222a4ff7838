#include "tests/train/train_test_util.h"

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

namespace tenet::train::testing {

TempDir::TempDir() {
  std::random_device rd;
  for (;;) {
    dir_ = std::filesystem::temp_directory_path() /
           ("tenet-train-test-" + std::to_string(rd()) + std::to_string(rd()));
    if (std::filesystem::create_directory(dir_)) return;
  }
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot open " << path;
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  EXPECT_TRUE(out.good()) << "cannot write " << path;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception, none was thrown";
  return "";
}

void expect_error(const std::function<void()>& fn, std::initializer_list<std::string> pieces) {
  const std::string message = error_of(fn);
  for (const std::string& piece : pieces)
    EXPECT_NE(message.find(piece), std::string::npos)
        << "message does not contain \"" << piece << "\":\n  " << message;
}

}  // namespace tenet::train::testing
