// Row-local temporaries (lower/row_local.h): which ones the planner keeps a
// row at a time, and compiled code that declares them inside the nest's
// loops giving the interpreter's bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "driver/driver.h"
#include "ir/interp.h"
#include "jit/executable.h"
#include "lower/lowered.h"
#include "runtime/tenet_runtime.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/codegen/contraction_util.h"

namespace tenet::codegen::testing {
namespace {

// Two softmaxes over rows of 40 and of 5000 floats, and a statement in a nest
// of its own that reads the first one's sums again.
const char* const kRows = R"(
def rows(float(B, 6, 40) x, float(B, 6, 5000) big) -> (p, q, r) {
  m(b, j) max=! x(b, j, k)
  e(b, j, k) = exp(x(b, j, k) - m(b, j))
  s(b, j) +=! e(b, j, k)
  p(b, j, k) = e(b, j, k) / s(b, j)
  mb(b, j) max=! big(b, j, k)
  eb(b, j, k) = exp(big(b, j, k) - mb(b, j))
  sb(b, j) +=! eb(b, j, k)
  q(b, j, k) = eb(b, j, k) / sb(b, j)
  r(j) +=! s(b, j)
}
)";

/// "name: elements@depth" for each row-local temporary of `fn`, by name.
std::string row_locals(const ir::Function& fn) {
  const lower::LoweredFunction lowered = lower::lower(fn, int64_t(32) << 20);
  std::vector<std::string> rows;
  for (const auto& [v, row] : lowered.memory.row_local)
    rows.push_back(v->name + ": " + std::to_string(row.elements) + "@" + std::to_string(row.depth));
  std::sort(rows.begin(), rows.end());
  std::string out;
  for (const std::string& row : rows) out += (out.empty() ? "" : ", ") + row;
  return out;
}

TEST(RowLocal, OnlyTemporariesReadAtTheCurrentIterationOfTheirNest) {
  ir::Module m = compile_tn(kRows);
  driver::optimise(m);
  // e: a row of 40; m, mb, sb: one element per (b, j). Not eb (20000
  // bytes, beyond kMaxRowLocalBytes), nor s, which r reads outside its nest.
  EXPECT_EQ(row_locals(*m.find("rows")), "e: 40@2, m: 1@2, mb: 1@2, sb: 1@2");

  const std::string source = driver::emit_cpp(m).source;
  EXPECT_NE(source.find("alignas(64) float t_e[40];"), std::string::npos) << source;
  // The same arithmetic as the whole tensors: the interpreter's values, to
  // the last place of exp (compiled code fuses its multiply-adds).
  const int64_t b = 3;
  const ir::SizeBindings sizes = {{"B", b}};
  jit::CompiledFunction f = driver::jit_compile(m, "rows", test_jit_options());
  expect_matches_interpreter(f, sizes, 5, 1e-6);
  // The workspace holds s and eb only.
  EXPECT_LE(jit::Executable(f, sizes).workspace_bytes(),
            tenet::workspace_bytes<float>(b * 6) + tenet::workspace_bytes<float>(b * 6 * 5000));
}

TEST(RowLocal, TheGradientsRecomputedRow) {
  // Softmax's gradient recomputes e in the backward nest: a row there too.
  ir::Module g = gradient_of_source(R"(
def sm(float(B, 6, 40) x) -> (p) {
  m(b, j) max=! x(b, j, k)
  e(b, j, k) = exp(x(b, j, k) - m(b, j))
  s(b, j) +=! e(b, j, k)
  p(b, j, k) = e(b, j, k) / s(b, j)
}
)",
                                    "sm");
  driver::optimise(g);
  EXPECT_NE(row_locals(g.functions[0]).find("e: 40@"), std::string::npos)
      << row_locals(g.functions[0]);
  expect_matches_interpreter(driver::jit_compile(g, g.functions[0].name, test_jit_options()),
                             {{"B", 70}}, 3, 1e-6);
}

}  // namespace
}  // namespace tenet::codegen::testing
