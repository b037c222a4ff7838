// Border peeling (lower/peel.h): which loops of a windowed reduction have an
// interior and what it is, and that compiled code with the interior run
// without the window's tests gives the interpreter's bits, for a padded
// 3x3 stride-2 max-pool (PyTorch's ResNet stem, as the importer writes it)
// and its gradient, on values that test the rule (NaN, infinities, +0 and -0
// ties, values below the padding's -3.4e38).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

#include "driver/driver.h"
#include "ir/interp.h"
#include "ir/mutator.h"
#include "lower/peel.h"
#include "lower/schedule.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/codegen/contraction_util.h"

namespace tenet::codegen::testing {
namespace {

// 9 rows: the last window row reaches past the bottom (out rows 1..3 are the
// interior); 10 columns: only the left border (out columns 1..4).
const char* const kPool = R"(
def pool(float(B, C, 9, 10) x) -> (y) {
  y(i, j, k, l) max=! select(2*k + r - 1 >= 0 && 2*k + r - 1 < 9 && 2*l + s - 1 >= 0 && 2*l + s - 1 < 10, x?(i, j, 2*k + r - 1, 2*l + s - 1), (-3.4028234663852886e+38)) where r in 0:3, s in 0:3, i in 0:B, j in 0:C, k in 0:5, l in 0:5
}
def plain(float(B, C, 9, 10) x) -> (y) {
  y(i, j, k, l) max=! x(i, j, 2*k + r, 2*l + s) where r in 0:3, s in 0:3, k in 0:4, l in 0:4
}
def row(float(10) x) -> (y) {
  y(l) max=! select(l + s - 1 >= 0 && l + s - 1 < 10, x?(l + s - 1), (-3.4028234663852886e+38)) where s in 0:3, l in 0:10
}
def symbolic(float(B, C, H, W) x) -> (y) {
  y(i, j, k, l) max=! select(2*k + r - 1 >= 0 && 2*l + s - 1 >= 0, x?(i, j, 2*k + r - 1, 2*l + s - 1), (-3.4028234663852886e+38)) where r in 0:3, s in 0:3, i in 0:B, j in 0:C, k in 0:4, l in 0:4
}
)";

const ir::Stmt& only_statement(const ir::Module& m, const std::string& fn) {
  const ir::Function* f = m.find(fn);
  EXPECT_NE(f, nullptr) << fn;
  EXPECT_EQ(f->body.size(), 1u) << fn;
  return f->body.front();
}

TEST(BorderPeel, TheInteriorOfAPaddedPoolAndNoneWithoutBorders) {
  ir::Module m = compile_tn(kPool);
  driver::optimise(m);
  const ir::Stmt& pool = only_statement(m, "pool");
  const auto peel = lower::border_peel(pool.compute, lower::loop_schedule(pool));
  ASSERT_TRUE(peel.has_value());
  ASSERT_EQ(peel->loops.size(), 2u);
  EXPECT_EQ(peel->loops[0].dim, 2u);  // k: rows 1..3 (k = 4 reads row 9)
  EXPECT_EQ(peel->loops[0].lo, 1);
  EXPECT_EQ(peel->loops[0].hi, 4);
  EXPECT_EQ(peel->loops[1].dim, 3u);  // l: columns 1..4
  EXPECT_EQ(peel->loops[1].lo, 1);
  EXPECT_EQ(peel->loops[1].hi, 5);
  EXPECT_EQ(peel->loops[1].end, 5);
  // The interior reads x plainly: no select, no guard.
  EXPECT_FALSE(ir::any_node(peel->interior, [](const ir::Expr& e) {
    return e->kind == ir::ExprKind::Select || (e->kind == ir::ExprKind::Read && e->guarded);
  }));
  // No test at all: nothing to peel.
  const ir::Stmt& plain = only_statement(m, "plain");
  EXPECT_FALSE(lower::border_peel(plain.compute, lower::loop_schedule(plain)).has_value());
  // Against a symbolic size a test is kept: the lower borders are peeled, and
  // the interior still reads x guarded (its upper bound is not known).
  const ir::Stmt& symbolic = only_statement(m, "symbolic");
  const auto partly = lower::border_peel(symbolic.compute, lower::loop_schedule(symbolic));
  ASSERT_TRUE(partly.has_value());
  ASSERT_EQ(partly->loops.size(), 2u);
  EXPECT_EQ(partly->loops[0].lo, 1);
  EXPECT_EQ(partly->loops[0].hi, 4);
  EXPECT_TRUE(ir::any_node(partly->interior, [](const ir::Expr& e) {
    return e->kind == ir::ExprKind::Read && e->guarded;
  }));
}

// A window over the statement's only loop, the parallel one: not split (an
// OpenMP pragma over it would cover the first part only), and still right.
TEST(BorderPeel, TheOnlyLoopIsNotSplit) {
  ir::Module m = compile_tn(kPool);
  driver::optimise(m);
  const std::string source = driver::emit_cpp(m).source;
  const size_t begin = source.find("void tenet_row__with_workspace(");
  ASSERT_NE(begin, std::string::npos);
  const std::string row = source.substr(begin, source.find("\n}\n", begin) - begin);
  EXPECT_EQ(row.find("the interior runs"), std::string::npos) << row;
  jit::CompiledFunction f = driver::jit_compile(m, "row", test_jit_options());
  expect_matches_interpreter(f, {}, 5, 0.0);
}

TEST(BorderPeel, PeeledPoolAndItsGradientGiveTheInterpretersBits) {
  const ir::Module grad = gradient_of_source(kPool, "pool");
  ir::Module optimised = grad;
  driver::optimise(optimised);
  const ir::Function& fn = optimised.functions.front();
  const std::string source = driver::emit_cpp(optimised).source;
  // The forward and the gradient's arg-max are peeled.
  size_t peeled = 0;
  for (size_t at = source.find("the interior runs"); at != std::string::npos;
       at = source.find("the interior runs", at + 1))
    ++peeled;
  EXPECT_EQ(peeled, 2u) << source;

  const int64_t b = 2, c = 3;
  Tensor x(ElemType::F32, {b, c, 9, 10}), dy(ElemType::F32, {b, c, 5, 5});
  uint32_t state = 99;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = HUGE_VALF;
  const float special[] = {nan, -inf, inf, 0.0f, -0.0f, -FLT_MAX, 1.0f, 1.0f};
  for (int64_t e = 0; e < x.numel(); ++e) {
    const uint32_t v = next();
    x.data<float>()[e] = v % 4 == 0 ? special[(v >> 4) % 8] : float(v % 1000) / 500.0f - 1.0f;
  }
  // A channel of -inf only: the padding (-3.4e38) is the maximum where a
  // window reaches past the border, -inf in the interior.
  for (int64_t e = 0; e < 90; ++e) x.data<float>()[e] = -inf;
  for (int64_t e = 0; e < dy.numel(); ++e) dy.data<float>()[e] = float(next() % 100) / 50.0f;
  std::vector<Tensor> inputs;
  for (const ir::ValuePtr& in : fn.inputs) inputs.push_back(in->name == "x" ? x : dy);
  const ir::SizeBindings sizes = {{"B", b}};
  const std::vector<Tensor> expected = ir::interpret(fn, inputs, sizes);
  jit::CompiledFunction f = driver::jit_compile(optimised, fn.name, test_jit_options());
  const std::vector<Tensor> actual = f.run(inputs, sizes);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t o = 0; o < actual.size(); ++o)
    EXPECT_EQ(std::memcmp(actual[o].raw(), expected[o].raw(), actual[o].nbytes()), 0)
        << fn.outputs[o]->name << " differs from the interpreter's bits";
  // The -inf channel: -3.4e38 on the border, -inf inside.
  const float* y = expected[0].data<float>();
  EXPECT_EQ(y[0], -FLT_MAX);          // k = 0, l = 0
  EXPECT_EQ(y[1 * 5 + 1], -inf);      // k = 1, l = 1: interior
  EXPECT_EQ(y[4 * 5 + 2], -FLT_MAX);  // k = 4: its window's last row is past the bottom
}

}  // namespace
}  // namespace tenet::codegen::testing
