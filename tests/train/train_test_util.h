/// \file
/// Helpers for the training-runtime tests: a temporary directory, byte-level
/// file IO, and checks that a call throws an error
/// whose message contains given pieces.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>

namespace tenet::train::testing {

/// A fresh directory under the system temp dir, removed with its contents.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

std::string read_bytes(const std::string& path);
void write_bytes(const std::string& path, const std::string& bytes);

/// The message of the exception `fn` throws (failing the test when it throws
/// nothing or something not derived from std::exception).
std::string error_of(const std::function<void()>& fn);

/// EXPECTs that fn throws and that the message contains every piece.
void expect_error(const std::function<void()>& fn, std::initializer_list<std::string> pieces);

}  // namespace tenet::train::testing
