// The JIT's cache and its error paths: a second compile (in this process or
// another) runs no compiler, any change to the inputs of the key does, and
// failures say what went wrong.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "codegen/jit.h"
#include "ir/bind.h"
#include "ir/builder.h"
#include "support/error.h"
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
                      << "exec '" << default_jit_compiler() << "' \"$@\"\n";
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

int lines_in(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST(JitCache, SecondCompileHitsTheCacheAndAnyChangeMisses) {
  const std::string dir = fresh_folder("jit-cache");
  const std::string log = dir + "/compiles.log";
  JitOptions options;
  options.cache_dir = dir + "/cache";
  options.cxx = logging_compiler(dir, log);
  options.flags = kQuickFlags;
  ir::Module m = compile_tn(kScale);

  CompiledFunction first = jit_compile(m, "scale", options);
  EXPECT_FALSE(first.cache_hit());
  EXPECT_EQ(lines_in(log), 1);
  EXPECT_TRUE(fs::exists(first.library_path()));
  EXPECT_TRUE(fs::exists(first.source_path()));
  EXPECT_TRUE(fs::exists(fs::path(first.library_path()).parent_path() / "build.log"));
  expect_matches_interpreter(first, {{"N", 10}}, 1);

  CompiledFunction again = jit_compile(m, "scale", options);
  EXPECT_TRUE(again.cache_hit());
  EXPECT_EQ(again.library_path(), first.library_path());
  EXPECT_EQ(lines_in(log), 1) << "a cache hit ran the compiler";
  expect_matches_interpreter(again, {{"N", 10}}, 2);

  // Another process finds the library too (it runs JitCacheChild below).
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  auto child = tenet::testing::run_command("TENET_TEST_CHILD_CACHE='" + options.cache_dir +
                                           "' TENET_TEST_CHILD_CXX='" + options.cxx + "' '" + self +
                                           "' --gtest_filter=JitCacheChild.* 2>&1");
  EXPECT_EQ(child.exit_code, 0) << child.out;
  EXPECT_NE(child.out.find("[  PASSED  ] 1 test"), std::string::npos) << child.out;
  EXPECT_EQ(lines_in(log), 1) << "the second process ran the compiler";

  JitOptions other_flags = options;
  other_flags.flags.push_back("-DTENET_TEST_FLAG=1");
  CompiledFunction flagged = jit_compile(m, "scale", other_flags);
  EXPECT_FALSE(flagged.cache_hit());
  EXPECT_NE(flagged.library_path(), first.library_path());
  EXPECT_EQ(lines_in(log), 2);

  JitOptions serial = options;
  serial.cpp.openmp = false;  // other source, other key
  EXPECT_FALSE(jit_compile(m, "scale", serial).cache_hit());
  EXPECT_EQ(lines_in(log), 3);
}

// Runs only when JitCache above starts it in a child process.
TEST(JitCacheChild, HitsTheCache) {
  const char* cache = std::getenv("TENET_TEST_CHILD_CACHE");
  if (!cache) GTEST_SKIP() << "run by JitCache.SecondCompileHitsTheCacheAndAnyChangeMisses";
  JitOptions options;
  options.cache_dir = cache;
  options.cxx = std::getenv("TENET_TEST_CHILD_CXX");
  options.flags = kQuickFlags;
  CompiledFunction f = jit_compile(compile_tn(kScale), "scale", options);
  EXPECT_TRUE(f.cache_hit());
  expect_matches_interpreter(f, {{"N", 4}}, 3);
}

TEST(JitCache, CompilerFailureShowsTheCompilerOutputAndTheSource) {
  JitOptions options = test_jit_options();
  options.cache_dir = fresh_folder("jit-failure");
  options.flags = {"-shared", "-fPIC", "-fno-such-option-for-tenet-tests"};
  try {
    jit_compile(compile_tn(kScale), "scale", options);
    FAIL() << "expected an InternalError";
  } catch (const InternalError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the C++ compiler failed"), std::string::npos) << what;
    EXPECT_NE(what.find("no-such-option-for-tenet-tests"), std::string::npos) << what;
    EXPECT_NE(what.find(options.cache_dir), std::string::npos) << what;
    EXPECT_NE(what.find("scale.cpp"), std::string::npos) << what;
  }
  // Nothing half-built is left where a later compile would take it for a hit.
  for (const auto& entry : fs::recursive_directory_iterator(options.cache_dir))
    EXPECT_EQ(entry.path().string().find(".so"), std::string::npos) << entry.path();
}

TEST(JitCache, MissingCompilerIsReported) {
  JitOptions options = test_jit_options();
  options.cxx = "/nonexistent/tenet-test-c++";
  try {
    jit_compile(compile_tn(kScale), "scale", options);
    FAIL() << "expected an InternalError";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/tenet-test-c++"), std::string::npos)
        << e.what();
  }
}

TEST(JitRun, BadInputsAreBindErrorsBeforeAnyCodeRuns) {
  CompiledFunction f = jit_compile(compile_tn(kScale), "scale", test_jit_options());
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
  CompiledFunction f = jit_compile(m, "shift", test_jit_options());
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
