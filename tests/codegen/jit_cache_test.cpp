// The JIT's cache and its error paths: a second compile (in this process or
// another) runs no compiler, any change to the inputs of the key does, and
// failures say what went wrong.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "driver/driver.h"
#include "ir/bind.h"
#include "ir/builder.h"
#include "jit/jit.h"
#include "support/child_processes.h"
#include "support/error.h"
#include "support/temp_files.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/support/golden.h"

namespace tenet::codegen::testing {
namespace {

namespace fs = std::filesystem;

const char* const kScale = R"(
def scale(float(N) x) -> (y) {
  y(i) = 2 * x(i) + 1
}
)";

/// Flags for quick compiles of the tiny kernel these tests build.
const std::vector<std::string> kQuickFlags = {"-O0", "-fopenmp", "-fPIC", "-shared", "-std=c++17"};

/// A compiler wrapper that logs every compile (not `--version`) to `log`.
std::string logging_compiler(const std::string& dir, const std::string& log) {
  const std::string path = dir + "/logging-c++";
  std::ofstream(path) << "#!/bin/sh\n"
                      << "if [ \"$1\" != \"--version\" ]; then echo \"$@\" >> '" << log << "'; fi\n"
                      << "exec '" << jit::default_jit_compiler() << "' \"$@\"\n";
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

int lines_in(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

/// Runs JitCacheChild below in a child process on `cache` with `cxx`; it
/// expects a cache hit or not. Returns its stdout and stderr.
std::string run_child(const jit::JitOptions& options, bool expect_hit) {
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  auto child = tenet::testing::run_command("TENET_TEST_CHILD_CACHE='" + options.cache_dir +
                                           "' TENET_TEST_CHILD_CXX='" + options.cxx +
                                           "' TENET_TEST_CHILD_HIT=" + (expect_hit ? "1" : "0") +
                                           " '" + self + "' --gtest_filter=JitCacheChild.*");
  EXPECT_EQ(child.exit_code, 0) << child.out << child.err;
  EXPECT_NE(child.out.find("[  PASSED  ] 1 test"), std::string::npos) << child.out << child.err;
  return child.out + child.err;
}

TEST(JitCache, SecondCompileHitsTheCacheAndAnyChangeMisses) {
  const std::string dir = fresh_folder("jit-cache");
  const std::string log = dir + "/compiles.log";
  jit::JitOptions options;
  options.cache_dir = dir + "/cache";
  options.cxx = logging_compiler(dir, log);
  options.flags = kQuickFlags;
  ir::Module m = compile_tn(kScale);

  jit::CompiledFunction first = driver::jit_compile(m, "scale", options);
  EXPECT_FALSE(first.cache_hit());
  EXPECT_EQ(lines_in(log), 1);
  EXPECT_TRUE(fs::exists(first.library_path()));
  EXPECT_TRUE(fs::exists(first.source_path()));
  EXPECT_TRUE(fs::exists(fs::path(first.library_path()).parent_path() / "build.log"));
  expect_matches_interpreter(first, {{"N", 10}}, 1);

  jit::CompiledFunction again = driver::jit_compile(m, "scale", options);
  EXPECT_TRUE(again.cache_hit());
  EXPECT_EQ(again.library_path(), first.library_path());
  EXPECT_EQ(lines_in(log), 1) << "a cache hit ran the compiler";
  expect_matches_interpreter(again, {{"N", 10}}, 2);

  // Another process finds the library too (it runs JitCacheChild below).
  run_child(options, /*expect_hit=*/true);
  EXPECT_EQ(lines_in(log), 1) << "the second process ran the compiler";

  jit::JitOptions other_flags = options;
  other_flags.flags.push_back("-DTENET_TEST_FLAG=1");
  jit::CompiledFunction flagged = driver::jit_compile(m, "scale", other_flags);
  EXPECT_FALSE(flagged.cache_hit());
  EXPECT_NE(flagged.library_path(), first.library_path());
  EXPECT_EQ(lines_in(log), 2);

  jit::JitOptions serial = options;
  serial.cpp.openmp = false;  // other source, other key
  EXPECT_FALSE(driver::jit_compile(m, "scale", serial).cache_hit());
  EXPECT_EQ(lines_in(log), 3);
}

// Runs only when a JitCache test above starts it in a child process.
TEST(JitCacheChild, CompilesScale) {
  const char* cache = std::getenv("TENET_TEST_CHILD_CACHE");
  if (!cache) GTEST_SKIP() << "run by the JitCache tests in a child process";
  jit::JitOptions options;
  options.cache_dir = cache;
  options.cxx = std::getenv("TENET_TEST_CHILD_CXX");
  options.flags = kQuickFlags;
  jit::CompiledFunction f = driver::jit_compile(compile_tn(kScale), "scale", options);
  EXPECT_EQ(f.cache_hit(), std::string(std::getenv("TENET_TEST_CHILD_HIT")) == "1");
  expect_matches_interpreter(f, {{"N", 4}}, 3);
}

/// The path of the one library in a cache folder.
std::string the_only_library(const std::string& cache_dir) {
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(cache_dir))
    if (entry.path().extension() == ".so") found.push_back(entry.path().string());
  EXPECT_EQ(found.size(), 1u) << cache_dir;
  return found.empty() ? "" : found.front();
}

TEST(JitCache, DamagedLibraryIsBuiltAgain) {
  const std::string dir = fresh_folder("jit-damaged");
  const std::string log = dir + "/compiles.log";
  jit::JitOptions options;
  options.cache_dir = dir + "/cache";
  options.cxx = logging_compiler(dir, log);
  options.flags = kQuickFlags;
  // Built by a child process: a library this process had loaded must not be
  // changed under it (its pages would fault with SIGBUS).
  run_child(options, /*expect_hit=*/false);
  ASSERT_EQ(lines_in(log), 1);
  const std::string library = the_only_library(options.cache_dir);
  const auto size = fs::file_size(library);

  // Truncated (a full disk, a crash of the file system): dlopen would die
  // of SIGBUS; its checksum tells.
  fs::resize_file(library, size / 2);
  std::string out = run_child(options, /*expect_hit=*/false);
  EXPECT_NE(out.find("warning: the cached library " + library +
                     " is damaged (its checksum is not the one recorded when it was built); "
                     "building it again"),
            std::string::npos)
      << out;
  EXPECT_EQ(lines_in(log), 2) << "the damaged library was not built again";
  EXPECT_GT(fs::file_size(library), size / 2);
  run_child(options, /*expect_hit=*/true);  // and the rebuilt one is a hit
  EXPECT_EQ(lines_in(log), 2);

  // Another library in its place, with its checksum: it loads, but lacks
  // scale's entry points.
  jit::JitOptions other = options;
  other.cache_dir = dir + "/other-cache";
  const ir::Module twice = compile_tn("def twice(float(N) x) -> (y) {\n  y(i) = 2 * x(i)\n}\n");
  const std::string twice_library = driver::jit_compile(twice, "twice", other).library_path();
  for (const char* suffix : {"", ".fnv1a"})
    fs::copy_file(twice_library + suffix, library + suffix, fs::copy_options::overwrite_existing);
  out = run_child(options, /*expect_hit=*/false);
  EXPECT_NE(out.find("the symbol tenet_scale__signature is missing"), std::string::npos) << out;
  EXPECT_EQ(lines_in(log), 4);
}

TEST(JitCache, TemporariesOfKilledCompilesAreRemoved) {
  const std::string dir = fresh_folder("jit-stale");
  jit::JitOptions options;
  options.cache_dir = dir + "/cache";
  options.flags = kQuickFlags;
  jit::CompiledFunction f = driver::jit_compile(compile_tn(kScale), "scale", options);
  const std::string entry = fs::path(f.library_path()).parent_path().string();
  // A finished child's pid: a process that no longer runs.
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::string host_field = host;
  for (char& c : host_field)
    if (c == '.' || c == '/') c = '_';
  const std::string stale =
      f.library_path() + ".tmp." + host_field + "." + std::to_string(dead) + ".0";
  const std::string live =
      f.library_path() + ".tmp." + host_field + "." + std::to_string(::getppid()) + ".0";
  std::ofstream(stale) << "half a library";
  std::ofstream(live) << "a library being written";
  fs::remove(f.library_path());  // a miss: the compile that was killed
  EXPECT_FALSE(driver::jit_compile(compile_tn(kScale), "scale", options).cache_hit());
  EXPECT_FALSE(fs::exists(stale)) << stale;
  EXPECT_TRUE(fs::exists(live)) << "a running process's temporary was removed";
}

TEST(JitCache, UnwritableCacheIsAUserError) {
  jit::JitOptions options = test_jit_options();
  options.cache_dir = "/proc/tenet-test-jit-cache";
  try {
    driver::jit_compile(compile_tn(kScale), "scale", options);
    FAIL() << "expected a BindError";
  } catch (const BindError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot create the folder '/proc/tenet-test-jit-cache' (No such file or "
              "directory); set TENET_CACHE_DIR to a folder you can write");
  }
}

TEST(JitCache, CompilerFailureOnGeneratedCodeShowsTheCompilerOutputAndTheSource) {
  // A compiler that builds anything but Tenet's generated code: a bug in Tenet.
  const std::string dir = fresh_folder("jit-failure");
  const std::string cxx = dir + "/picky-c++";
  std::ofstream(cxx) << "#!/bin/sh\n"
                     << "case \"$*\" in *scale.cpp*) echo 'scale.cpp:1: error: tenet-test' >&2; "
                        "exit 1;; esac\n"
                     << "exec '" << jit::default_jit_compiler() << "' \"$@\"\n";
  fs::permissions(cxx, fs::perms::owner_all);
  jit::JitOptions options = test_jit_options();
  options.cache_dir = dir + "/cache";
  options.cxx = cxx;
  options.flags = kQuickFlags;
  try {
    driver::jit_compile(compile_tn(kScale), "scale", options);
    FAIL() << "expected an InternalError";
  } catch (const InternalError& e) {
    const std::string what = e.what();
    EXPECT_NE(
        what.find("the C++ compiler failed (exit status 1) on generated code " + options.cache_dir),
        std::string::npos)
        << what;
    EXPECT_NE(what.find("scale.cpp:1: error: tenet-test"), std::string::npos) << what;
  }
  // Nothing half-built is left where a later compile would take it for a hit.
  for (const auto& entry : fs::recursive_directory_iterator(options.cache_dir))
    EXPECT_EQ(entry.path().string().find(".so"), std::string::npos) << entry.path();
}

/// The BindError of compiling kScale with `options`.
std::string bind_error(const jit::JitOptions& options) {
  try {
    driver::jit_compile(compile_tn(kScale), "scale", options);
  } catch (const BindError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a BindError";
  return "";
}

TEST(JitCache, CompilerThatCannotBuildAnythingIsAUserError) {
  // Flags the compiler rejects: it fails on a one-line library too.
  jit::JitOptions options = test_jit_options();
  options.cache_dir = fresh_folder("jit-bad-flags");
  options.flags = {"-shared", "-fPIC", "-fno-such-option-for-tenet-tests"};
  std::string what = bind_error(options);
  EXPECT_NE(what.find("cannot build even a one-line C++17 shared library with the flags Tenet "
                      "uses; set TENET_CXX to a C++17 compiler such as g++"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("no-such-option-for-tenet-tests"), std::string::npos) << what;

  // Not a compiler at all.
  options = test_jit_options();
  options.cxx = "/bin/false";
  what = bind_error(options);
  EXPECT_EQ(what.rfind("cannot run the C++ compiler '/bin/false' (JitOptions::cxx): `--version` "
                       "exited with status 1",
                       0),
            0u)
      << what;
  options.cxx = "/bin/echo";  // exits 0 and writes nothing
  what = bind_error(options);
  EXPECT_NE(what.find("the C++ compiler '/bin/echo' (JitOptions::cxx) exited with status 0 but "
                      "wrote no library"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("is it a C++ compiler?"), std::string::npos) << what;
}

TEST(JitCache, MissingCompilerIsAUserErrorNamingWhereItCameFrom) {
  jit::JitOptions options = test_jit_options();
  options.cxx = "/nonexistent/tenet-test-c++";
  EXPECT_EQ(bind_error(options),
            "the C++ compiler '/nonexistent/tenet-test-c++' (JitOptions::cxx) does not exist; "
            "set TENET_CXX to a C++17 compiler such as g++");
  options.cxx = "";
  ::setenv("TENET_CXX", "tenet-test-no-such-c++", 1);
  const std::string what = bind_error(options);
  ::unsetenv("TENET_CXX");
  EXPECT_EQ(what,
            "the C++ compiler 'tenet-test-no-such-c++' (TENET_CXX) is not found in PATH; set "
            "TENET_CXX to a C++17 compiler such as g++");
  options.cxx = "/etc";
  EXPECT_EQ(bind_error(options),
            "the C++ compiler '/etc' (JitOptions::cxx) is not an executable file; set TENET_CXX "
            "to a C++17 compiler such as g++");
}

TEST(JitCache, AnInterruptEndsTheCompilerAndItsChildren) {
  // The check a host program (Python) sets throws while a slow compiler runs.
  const std::string dir = fresh_folder("jit-interrupt");
  const std::string cxx = dir + "/slow-c++";
  std::ofstream(cxx) << "#!/bin/sh\n"
                     << "if [ \"$1\" = \"--version\" ]; then echo slow; exit 0; fi\n"
                     << "sleep 300 &\n"
                     << "echo $! > '" << dir << "/child.pid'\n"
                     << "wait\n";
  fs::permissions(cxx, fs::perms::owner_all);
  jit::JitOptions options;
  options.cache_dir = dir + "/cache";
  options.cxx = cxx;
  struct Interrupted {};
  const std::string pid_file = dir + "/child.pid";
  tenet::set_interrupt_check([&] {
    if (fs::exists(pid_file) && fs::file_size(pid_file) > 0) throw Interrupted{};
  });
  EXPECT_THROW(driver::jit_compile(compile_tn(kScale), "scale", options), Interrupted);
  tenet::set_interrupt_check(nullptr);
  const long child = std::atol(tenet::testing::read_file(pid_file).c_str());
  for (int i = 0; i < 500 && tenet::process_is_running(child); ++i) ::usleep(10000);
  EXPECT_FALSE(tenet::process_is_running(child)) << "the compiler's child outlived the compile";
  ::kill(pid_t(child), SIGKILL);  // in case the test failed
}

TEST(JitRun, BadInputsAreBindErrorsBeforeAnyCodeRuns) {
  jit::CompiledFunction f = driver::jit_compile(compile_tn(kScale), "scale", test_jit_options());
  Tensor wrong_rank(ElemType::F32, {2, 3});
  Tensor wrong_type(ElemType::F64, {4});
  EXPECT_THROW(f.run({wrong_rank}), BindError);
  EXPECT_THROW(f.run({wrong_type}), BindError);
  EXPECT_THROW(f.run({}), BindError);
  try {
    f.run({Tensor(ElemType::F32, {4})}, {{"N", 5}});
    FAIL() << "expected a BindError";
  } catch (const BindError& e) {
    EXPECT_NE(std::string(e.what()).find("input 'x'"), std::string::npos) << e.what();
  }
}

TEST(JitRun, UnguardedReadsOutOfBoundsAreBindErrors) {
  // y(i) = x(i + 1) for i in 0:N reads past x's end; the interpreter says so,
  // and the JIT must say so too instead of running generated code that would.
  ir::FunctionBuilder fb("shift");
  ir::SizeExpr N = ir::SizeExpr::sym("N");
  ir::ValuePtr x = fb.input("x", ElemType::F32, {N});
  fb.output(fb.compute("y", {{"i", 0, N}}, {}, ir::ReduceOp::None,
                       ir::make_read(x, {ir::Affine{{{"i", 1}}, 1}})));
  ir::Module m;
  m.functions.push_back(fb.finish());
  jit::CompiledFunction f = driver::jit_compile(m, "shift", test_jit_options());
  try {
    f.run({Tensor(ElemType::F32, {4})});
    FAIL() << "expected a BindError";
  } catch (const BindError& e) {
    EXPECT_NE(std::string(e.what()).find("out-of-bounds read x(i + 1)"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tenet::codegen::testing
