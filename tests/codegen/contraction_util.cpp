#include "tests/codegen/contraction_util.h"
#include "driver/driver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ad/grad.h"
#include "ir/bind.h"
#include "ir/conv_plan.h"
#include "ir/gemm_plan.h"
#include "ir/interp.h"
#include "passes/pipeline.h"
#include "support/diagnostics.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/support/golden.h"

namespace tenet::codegen::testing {

namespace {

void collect_lowered(const std::vector<ir::Stmt>& body, std::string& out) {
  for (const ir::Stmt& s : body) {
    if (s.kind == ir::StmtKind::Loop) {
      collect_lowered(s.loop->body, out);
    } else if (s.annotations.gemm) {
      out += s.compute.result->name + ": " + ir::describe(*s.annotations.gemm, s.compute) + "\n";
    } else if (s.annotations.conv) {
      out += s.compute.result->name + ": " + ir::describe(*s.annotations.conv, s.compute) + "\n";
    }
  }
}

int64_t longest_reduction(const std::vector<ir::Stmt>& body, const ir::SizeBindings& sizes) {
  int64_t longest = 1;
  for (const ir::Stmt& s : body) {
    if (s.kind == ir::StmtKind::Loop) {
      longest = std::max(longest, longest_reduction(s.loop->body, sizes));
      continue;
    }
    int64_t length = 1;
    for (const ir::Dim& d : s.compute.reduce) length *= d.extent().eval(sizes);
    longest = std::max(longest, length);
  }
  return longest;
}

}  // namespace

ir::Module gradient_of_source(const std::string& source, const std::string& fn) {
  ir::Module m = compile_tn(source);
  ad::GradRequest req;
  req.vjp = true;
  ir::Module out;
  out.functions.push_back(ad::differentiate(m, fn, req));
  return out;
}

std::string lowered_statements(const ir::Function& fn) {
  std::string out;
  collect_lowered(fn.body, out);
  return out;
}

std::string expect_gemm_matches_interpreter(const ir::Module& m, const std::string& name,
                                            const ir::SizeBindings& sizes, int expected_lowered,
                                            uint64_t seed, const jit::JitOptions* options) {
  ir::Module optimised = m;
  for (ir::Function& f : optimised.functions) f = f.clone();
  driver::optimise(optimised);
  const ir::Function* fn = optimised.find(name);
  const ir::Function* original = m.find(name);
  if (!fn || !original) {
    ADD_FAILURE() << "no function " << name;
    return "";
  }
  const std::string lowered = lowered_statements(*fn);
  EXPECT_EQ(std::count(lowered.begin(), lowered.end(), '\n'), expected_lowered)
      << name << " lowered:\n"
      << lowered;

  const jit::JitOptions jit = options ? *options : test_jit_options();
  jit::CompiledFunction compiled = driver::jit_compile(optimised, name, jit);
  std::vector<Tensor> inputs = ir::random_inputs(*original, sizes, seed);
  const double k =
      double(longest_reduction(original->body, ir::bind_sizes(*original, inputs, sizes)));
  std::vector<Tensor> expected = ir::interpret(*original, inputs, sizes);
  std::vector<Tensor> actual = compiled.run(inputs, sizes);
  EXPECT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < std::min(actual.size(), expected.size()); ++i) {
    EXPECT_EQ(actual[i].shape(), expected[i].shape());
    if (actual[i].shape() != expected[i].shape()) continue;
    double scale = 0;
    for (int64_t j = 0; j < expected[i].numel(); ++j)
      scale = std::max(scale, std::fabs(expected[i].get(j)));
    const Diff d = compare(actual[i], expected[i]);
    EXPECT_LE(d.max_abs, 1e-5 * std::sqrt(k) * std::max(scale, 1e-30))
        << name << " output " << fn->output_names[i] << ": max |error| " << d.max_abs
        << " at flat index " << d.worst_index << " (interpreter " << expected[i].get(d.worst_index)
        << ", compiled " << actual[i].get(d.worst_index) << "), magnitude " << scale << ", K " << k;
  }
  return tenet::testing::read_file(compiled.source_path());
}

}  // namespace tenet::codegen::testing
