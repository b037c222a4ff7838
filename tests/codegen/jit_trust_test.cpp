// The JIT never loads or runs what another local user could have written
// (docs/security.md): a cache folder, cache entry or library writable by
// others, owned by someone else or planted as a symbolic link is refused
// with a message naming it; a new cache folder is private (mode 0700); the
// compiler, the BLAS library and the runtime headers must be as safe.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "driver/driver.h"
#include "jit/jit.h"
#include "support/error.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/support/golden.h"

namespace tenet::codegen::testing {
namespace {

namespace fs = std::filesystem;

const char* const kDouble = R"(
def twice(float(N) x) -> (y) {
  y(i) = 2 * x(i)
}
)";

const std::vector<std::string> kQuickFlags = {"-O0", "-fopenmp", "-fPIC", "-shared", "-std=c++17"};

jit::JitOptions quick_options(const std::string& cache_dir) {
  jit::JitOptions options;
  options.cache_dir = cache_dir;
  options.flags = kQuickFlags;
  return options;
}

unsigned mode_of(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

/// The BindError message of compiling kDouble with `options` ("" if none).
std::string refusal(const jit::JitOptions& options) {
  try {
    driver::jit_compile(compile_tn(kDouble), "twice", options);
  } catch (const BindError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a BindError";
  return "";
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "expected '" << part << "' in:\n" << text;
}

TEST(JitTrust, CacheFolderWritableByOthersIsRefused) {
  for (unsigned mode : {0777u, 0770u, 0722u}) {
    const std::string cache = fresh_folder("jit-trust-mode") + "/cache";
    fs::create_directory(cache);
    ::chmod(cache.c_str(), mode);
    char octal[8];
    std::snprintf(octal, sizeof octal, "%04o", mode);
    const std::string what = refusal(quick_options(cache));
    expect_contains(what, "refusing to load code from the JIT cache folder: '" + cache + "'");
    expect_contains(what, std::string("mode ") + octal + ") is writable by users other than");
    expect_contains(what, "Set TENET_CACHE_DIR to a folder only you can write");
    // Nothing was written into it.
    EXPECT_TRUE(fs::is_empty(cache)) << cache;
  }
}

TEST(JitTrust, NewCacheFoldersAreCreatedPrivateWhateverTheUmask) {
  const std::string root = fresh_folder("jit-trust-new");
  const std::string cache = root + "/a/b/cache";
  const mode_t old_umask = ::umask(0);  // would make 0777 folders of plain mkdir
  jit::CompiledFunction f = driver::jit_compile(compile_tn(kDouble), "twice", quick_options(cache));
  ::umask(old_umask);
  for (const std::string& dir : {root + "/a", root + "/a/b", cache})
    EXPECT_EQ(mode_of(dir), 0700u) << dir;
  EXPECT_EQ(mode_of(fs::path(f.library_path()).parent_path().string()), 0700u);
  expect_matches_interpreter(f, {{"N", 5}}, 1);
}

TEST(JitTrust, SymbolicLinksInTheCacheAreRefused) {
  // A compile in one cache tells the entry's name; another cache gets a
  // symbolic link of that name to the first one's entry.
  const std::string root = fresh_folder("jit-trust-link");
  jit::CompiledFunction f =
      driver::jit_compile(compile_tn(kDouble), "twice", quick_options(root + "/real"));
  const fs::path entry = fs::path(f.library_path()).parent_path();
  fs::create_directory(root + "/linked");
  ::chmod((root + "/linked").c_str(), 0700);
  fs::create_directory_symlink(entry, fs::path(root + "/linked") / entry.filename());
  std::string what = refusal(quick_options(root + "/linked"));
  expect_contains(what, "refusing to load code from the JIT cache entry: '" + root + "/linked/" +
                            entry.filename().string() + "'");
  expect_contains(what, "is a symbolic link, not a file Tenet wrote");

  // A real entry folder whose library is a symbolic link.
  fs::create_directory(root + "/file-linked");
  ::chmod((root + "/file-linked").c_str(), 0700);
  const fs::path planted = fs::path(root + "/file-linked") / entry.filename();
  fs::create_directory(planted);
  fs::copy_file(f.source_path(), planted / fs::path(f.source_path()).filename());
  fs::create_symlink(f.library_path(), planted / fs::path(f.library_path()).filename());
  what = refusal(quick_options(root + "/file-linked"));
  expect_contains(what, (planted / fs::path(f.library_path()).filename()).string() + "' (owner ");
  expect_contains(what, "is a symbolic link, not a file Tenet wrote");
}

TEST(JitTrust, CacheOwnedByAnotherUserIsRefused) {
  const std::string cache = fresh_folder("jit-trust-owner") + "/cache";
  fs::create_directory(cache);
  ::chmod(cache.c_str(), 0700);
  if (::chown(cache.c_str(), 65534, 65534) != 0) {
    if (::geteuid() != 0) GTEST_SKIP() << "only root can give a folder to user 65534 (nobody)";
    FAIL() << "chown to 65534 failed as root";
  }
  const std::string what = refusal(quick_options(cache));
  expect_contains(what, "refusing to load code from the JIT cache folder: '" + cache + "'");
  expect_contains(what, "mode 0700) belongs to another user");
}

TEST(JitTrust, AFolderAboveTheCacheWritableByOthersIsRefused) {
  // Whoever can write the parent can rename the cache away and put theirs.
  const std::string root = fresh_folder("jit-trust-parent");
  fs::create_directory(root + "/open");
  ::chmod((root + "/open").c_str(), 0777);
  const std::string what = refusal(quick_options(root + "/open/cache"));
  expect_contains(what, "'" + root + "/open' (owner ");
  expect_contains(what, "mode 0777) is writable by users other than its owner");
  // The sticky bit (as on /tmp) lets only a folder's owner rename it: fine.
  ::chmod((root + "/open").c_str(), 01777);
  jit::CompiledFunction f =
      driver::jit_compile(compile_tn(kDouble), "twice", quick_options(root + "/open/c"));
  expect_matches_interpreter(f, {{"N", 3}}, 2);
}

TEST(JitTrust, CompilerWritableByOthersIsRefused) {
  const std::string dir = fresh_folder("jit-trust-cxx");
  const std::string cxx = dir + "/c++";
  std::ofstream(cxx) << "#!/bin/sh\nexec '" << jit::default_jit_compiler() << "' \"$@\"\n";
  ::chmod(cxx.c_str(), 0757);
  jit::JitOptions options = quick_options(dir + "/cache");
  options.cxx = cxx;
  std::string what = refusal(options);
  expect_contains(what, "refusing to run the C++ compiler '" + cxx + "' (JitOptions::cxx): '" +
                            cxx + "' (owner ");
  expect_contains(what, "mode 0757) is writable by users other than its owner");

  ::chmod(cxx.c_str(), 0755);
  ::chmod(dir.c_str(), 0773);  // its folder: anyone could replace it
  what = refusal(options);
  expect_contains(what, "'" + dir + "' (owner ");
  expect_contains(what, "mode 0773) is writable by users other than its owner");
  ::chmod(dir.c_str(), 0755);
}

TEST(JitTrust, RuntimeHeadersWritableByOthersAreRefused) {
  const std::string dir = fresh_folder("jit-trust-runtime") + "/runtime";
  fs::copy(jit::runtime_dir(), dir);
  ::chmod((dir + "/tenet_runtime.h").c_str(), 0646);
  ::setenv("TENET_RUNTIME_DIR", dir.c_str(), 1);
  const std::string what = refusal(quick_options(fresh_folder("jit-trust-runtime-cache")));
  ::unsetenv("TENET_RUNTIME_DIR");
  expect_contains(what, "refusing to compile the runtime headers in '" + dir +
                            "' (TENET_RUNTIME_DIR): '" + dir + "/tenet_runtime.h' (owner ");
  expect_contains(what, "mode 0646) is writable by users other than its owner");
}

}  // namespace
}  // namespace tenet::codegen::testing
