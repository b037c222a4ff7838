// The operator zoo: every program of models/zoo/ (the table in
// zoo_table.cpp) is gradchecked twice:
//  (a) AD in the float64 interpreter against central finite differences
//      (ad::gradcheck), for every differentiable input;
//  (b) the compiled float32 gradient (ad::differentiate, then
//      driver::optimise, then the C++ JIT) against the float32
//      interpreter running the gradient function straight from AD.
// Each program prints one summary line; the whole table is printed again at
// the end, ready to paste (models/zoo/README.md quotes it).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "ad/gradcheck.h"
#include "driver/driver.h"
#include "ir/interp.h"
#include "jit/executable.h"
#include "jit/jit.h"
#include "passes/pipeline.h"
#include "support/diagnostics.h"
#include "support/error.h"
#include "tests/support/golden.h"
#include "tests/zoo/zoo_util.h"

namespace tenet::zoo {
namespace {

constexpr uint64_t kSeed = 5;

// Compiled float32 against interpreted float32, as
// max |compiled - interpreted| / max |interpreted| per output tensor.
// Both evaluate the same IR in float32, but the generated code may sum in
// another order (blocked or vectorised contractions) or contract a*b + c
// into one FMA, so the two differ by rounding: at worst about n * 6e-8 of
// the largest term for an n-term sum, ~1e-5 for the few-hundred-term sums
// here, more after long chains such as three routing iterations. Measuring
// against the tensor's peak (not element-wise) keeps entries that cancel to
// nearly 0 from reporting huge but meaningless relative errors. The errors
// measured are below 1e-6 (models/zoo/README.md), so 1e-4 leaves ample
// headroom, while a wrong index or a missing term in AD or codegen gives
// errors of order 1.
constexpr double kCompiledTolerance = 1e-4;

jit::JitOptions jit_options() {
  jit::JitOptions options;
  const char* dir = std::getenv("TENET_CACHE_DIR");  // CTest: a cache in the build folder
  options.cache_dir = dir && *dir ? dir : std::string(TENET_BINARY_DIR) + "/tenet-cache";
  return options;
}

// The gradients of every zoo program, compiled into one shared library (one
// compiler run for the whole suite, cached across runs), next to the
// unoptimised gradient functions the interpreter runs as the reference.
struct CompiledZoo {
  std::map<std::string, size_t> index;  // case_id -> position
  std::vector<ir::Function> reference;
  std::vector<jit::CompiledFunction> compiled;
  std::string error;  // why the library could not be built, if it could not
  double seconds = 0;
};

const CompiledZoo& compiled_zoo() {
  static const CompiledZoo zoo = [] {
    CompiledZoo z;
    auto start = std::chrono::steady_clock::now();
    try {
      ir::Module m;
      std::vector<std::string> names;
      for (const ZooCase& c : zoo_table()) {
        const ir::Function* fn = zoo_module(c.file).find(c.fn);
        TENET_ASSERT(fn, "zoo table: no function " + c.fn + " in " + c.file);
        ir::Function grad = ad::differentiate(*fn, c.request);
        grad.name = case_id(c) + "_grad";
        z.index[case_id(c)] = names.size();
        names.push_back(grad.name);
        z.reference.push_back(grad.clone());
        m.functions.push_back(std::move(grad));
      }
      driver::optimise(m);
      z.compiled = driver::jit_compile_together(m, names, jit_options());
    } catch (const std::exception& e) {
      z.error = e.what();
    }
    z.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf(
        "[zoo] %zu gradient functions: AD, pipeline and JIT (%s) in %.1f s\n", z.reference.size(),
        !z.compiled.empty() && z.compiled[0].cache_hit() ? "cached" : "compiled", z.seconds);
    return z;
  }();
  return zoo;
}

struct Row {
  std::string id;
  size_t inputs = 0;
  int64_t entries = 0, kinks = 0;
  double fd_rel = 0, compiled_rel = 0;
};
std::vector<Row>& rows() {
  static std::vector<Row> r;
  return r;
}

// Prints the table of every program checked in this run, at the very end.
class SummaryPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    if (rows().empty()) return;
    std::printf("\n| program | inputs | FD entries | kinks | FD max rel | compiled max rel |\n");
    std::printf("|---|---|---|---|---|---|\n");
    for (const Row& r : rows())
      std::printf("| %s | %zu | %lld | %lld | %.1e | %.1e |\n", r.id.c_str(), r.inputs,
                  static_cast<long long>(r.entries), static_cast<long long>(r.kinks), r.fd_rel,
                  r.compiled_rel);
  }
};
const auto* const kSummary = ::testing::AddGlobalTestEnvironment(new SummaryPrinter);

class ZooGrad : public ::testing::TestWithParam<ZooCase> {};

TEST_P(ZooGrad, MatchesFiniteDifferencesAndCompiled) {
  const ZooCase& c = GetParam();
  const ir::Function* fn = zoo_module(c.file).find(c.fn);
  ASSERT_NE(fn, nullptr) << "no function " << c.fn << " in models/zoo/" << c.file << ".tn";
  std::vector<Tensor> inputs = make_inputs(*fn, c.sizes, kSeed, c.ranges, c.int_hi);
  Row row{case_id(c)};

  // (a) float64 interpreter against central finite differences.
  ad::GradcheckOptions options;
  options.request = c.request;
  options.inputs = inputs;
  options.seed = kSeed;
  options.max_entries = c.max_entries;
  ad::GradcheckReport report = ad::gradcheck(*fn, options);
  EXPECT_TRUE(report.pass) << c.file << ".tn, " << c.fn << ":\n" << ad::format_report(report);
  ASSERT_FALSE(report.inputs.empty());
  for (const ad::InputCheck& in : report.inputs) {
    row.fd_rel = std::max(row.fd_rel, in.max_rel);
    row.entries += in.checked;
    row.kinks += in.kinks;
  }
  row.inputs = report.inputs.size();

  // (b) compiled float32 against the float32 interpreter.
  const CompiledZoo& zoo = compiled_zoo();
  ASSERT_TRUE(zoo.error.empty()) << zoo.error;
  const size_t k = zoo.index.at(case_id(c));
  const ir::Function& grad = zoo.reference[k];
  std::vector<Tensor> grad_inputs = with_cotangents(*fn, grad, inputs, kSeed);
  std::vector<Tensor> expected = ir::interpret(grad, grad_inputs);
  std::vector<Tensor> actual = zoo.compiled[k].run(grad_inputs);
  ASSERT_EQ(actual.size(), expected.size());
  // The call writes every element of every output (the Python module gives the
  // generated code unfilled buffers, python/src/kernel.cpp): outputs filled with
  // a pattern first end with the same bits.
  std::vector<Tensor> patterned;
  for (const Tensor& t : actual) {
    patterned.push_back(Tensor::unfilled(t.type(), t.shape()));
    std::memset(patterned.back().raw(), 0xA5, patterned.back().nbytes());
  }
  jit::Executable::for_inputs(zoo.compiled[k], grad_inputs).run_into(grad_inputs, patterned);
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_EQ(std::memcmp(patterned[i].raw(), actual[i].raw(), actual[i].nbytes()), 0)
        << c.fn << ": output " << grad.output_names[i] << " is not written whole";
  for (size_t i = 0; i < expected.size(); ++i) {
    const std::string& name = grad.output_names[i];
    double rel = max_rel_to_peak(actual[i], expected[i]);
    EXPECT_LE(rel, kCompiledTolerance) << c.fn << ": compiled " << name << " differs";
    row.compiled_rel = std::max(row.compiled_rel, rel);
    // A gradient that is 0 everywhere would pass both checks vacuously.
    if (i >= fn->outputs.size()) {
      double peak = 0;
      for (int64_t e = 0; e < expected[i].numel(); ++e)
        peak = std::max(peak, std::abs(expected[i].get(e)));
      EXPECT_GT(peak, 0) << c.fn << ": " << name << " is 0 everywhere";
    }
  }
  std::printf("[zoo] %-24s %zu inputs %5lld FD entries: FD max rel %.1e, compiled max rel %.1e\n",
              row.id.c_str(), row.inputs, static_cast<long long>(row.entries), row.fd_rel,
              row.compiled_rel);
  rows().push_back(row);
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooGrad, ::testing::ValuesIn(zoo_table()),
                         [](const ::testing::TestParamInfo<ZooCase>& param_info) {
                           return case_id(param_info.param);
                         });

// Every models/zoo/*.tn file is in the table, and every row names a file.
TEST(ZooTable, CoversEveryZooFile) {
  std::set<std::string> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(tenet::testing::source_path("models/zoo")))
    if (entry.path().extension() == ".tn") files.insert(entry.path().stem().string());
  std::set<std::string> listed;
  for (const ZooCase& c : zoo_table()) listed.insert(c.file);
  for (const std::string& f : files)
    EXPECT_TRUE(listed.count(f)) << "models/zoo/" << f << ".tn is not in the zoo table";
  for (const std::string& f : listed)
    EXPECT_TRUE(files.count(f)) << "the zoo table names models/zoo/" << f
                                << ".tn, which is missing";
  EXPECT_GE(files.size(), 30u);
}

}  // namespace
}  // namespace tenet::zoo
