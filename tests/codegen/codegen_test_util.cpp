#include "tests/codegen/codegen_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "ir/bind.h"
#include "ir/interp.h"
#include "lang/check.h"
#include "support/diagnostics.h"

namespace tenet::codegen::testing {

ir::Module compile_tn(const std::string& source) {
  try {
    return lang::compile_source(SourceFile("test.tn", source));
  } catch (const CompileError& e) {
    ADD_FAILURE() << "the test source does not compile:\n" << e.what();
    return {};
  }
}

jit::JitOptions test_jit_options() {
  jit::JitOptions options;
  const char* dir = std::getenv("TENET_CACHE_DIR");
  options.cache_dir = dir && *dir ? dir : std::string(TENET_BINARY_DIR) + "/tenet-cache";
  return options;
}

std::string fresh_folder(const std::string& name) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(TENET_BINARY_DIR) / "tmp" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

void expect_close(const Tensor& actual, const Tensor& expected, double tolerance,
                  const std::string& what) {
  ASSERT_EQ(actual.type(), expected.type()) << what;
  ASSERT_EQ(actual.shape(), expected.shape())
      << what << ": " << actual.describe() << " vs " << expected.describe();
  const bool exact = !is_float(expected.type());
  std::ostringstream first;
  int shown = 0;
  double worst = 0;
  int64_t worst_at = -1;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    const double a = actual.get(i), e = expected.get(i);
    double error = std::fabs(a - e) / std::max(std::fabs(e), 1.0);
    if (std::isnan(a) != std::isnan(e)) error = INFINITY;
    if (std::isnan(a) && std::isnan(e)) error = 0;
    if (std::isinf(e) && a == e) error = 0;
    if (error > worst) {
      worst = error;
      worst_at = i;
    }
    if ((exact ? a != e : error > tolerance) && shown < 5) {
      first << "  [" << i << "] compiled " << a << ", interpreter " << e << "\n";
      ++shown;
    }
  }
  EXPECT_TRUE(exact ? worst == 0 : worst <= tolerance)
      << what << ": " << actual.describe() << " differs; largest difference " << worst
      << " at flat index " << worst_at << ", first differences:\n"
      << first.str();
}

void expect_matches_interpreter(const jit::CompiledFunction& f, const ir::SizeBindings& sizes,
                                uint64_t seed, double tolerance, int64_t int_hi) {
  const ir::Function& fn = f.function();
  std::vector<Tensor> inputs = ir::random_inputs(fn, sizes, seed, int_hi);
  // Sizes that no input shape gives (`where i in 0:M`) are passed on.
  std::vector<Tensor> expected = ir::interpret(fn, inputs, sizes);
  std::vector<Tensor> actual = f.run(inputs, sizes);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    expect_close(
        actual[i], expected[i], tolerance,
        fn.name + " output " + fn.outputs[i]->name + " (seed " + std::to_string(seed) + ")");
}

}  // namespace tenet::codegen::testing
