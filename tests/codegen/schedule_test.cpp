// Loop schedules in generated code (passes/schedule.h, lower/schedule.h):
// reductions that accumulate out indices in place and nests of statements
// sharing loops compute bitwise what the default loop nests compute, match
// the interpreter, and give the same bits with 1 and 2 threads. Goldens of
// the generated code of a routing step, and of the save-or-recompute
// decisions that `tenet print --grad FN --stage fuse` shows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "ad/grad.h"
#include "codegen/cpp.h"
#include "driver/driver.h"
#include "ir/bind.h"
#include "ir/interp.h"
#include "lang/check.h"
#include "passes/pipeline.h"
#include "support/diagnostics.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/support/golden.h"

namespace tenet::codegen::testing {
namespace {

namespace fs = std::filesystem;

// The routing's weighted sum (reduced over t with stride 160: (k, e) moves
// inside the reduction), then a squash sharing the loop over b with it.
const char* const kRoutingStep = R"(
def routing_step(float(B, T, 10) c, float(B, T, 10, 16) uh) -> (s, n2, v) {
  s(b, k, e) +=! c(b, t, k) * uh(b, t, k, e)
  n2(b, k) +=! s(b, k, e) * s(b, k, e)
  v(b, k, e) = s(b, k, e) * sqrt(n2(b, k) + 1e-7) / (1 + n2(b, k))
}
)";

// Batch norm's statistics over (b, h, w) per channel, then a ReLU (whose mask
// the gradient's sums read), and a softmax over rows of 40: long sums and
// maxima whose accumulators are jammed, 8 channels or 8 rows at a time (rows
// of 6 are too short for lanes: no power of two from 4 up divides them).
const char* const kJammed = R"(
def norms(float(B, 16, 6, 6) x, float(B, 24, 40) t) -> (y, p) {
  mean(c) +=! x(b, c, h, w)
  cen(b, c, h, w) = x(b, c, h, w) - mean(c) / (B * 36)
  var(c) +=! cen(b, c, h, w) * cen(b, c, h, w)
  y(b, c, h, w) = fmax(cen(b, c, h, w) * rsqrt(var(c) / (B * 36) + 1e-5), 0)
  m(b, j) max=! t(b, j, k)
  e(b, j, k) = exp(t(b, j, k) - m(b, j))
  s(b, j) +=! e(b, j, k)
  p(b, j, k) = e(b, j, k) / s(b, j)
}
)";

// Jammed sums sharing the loop over n: a and b in one pass; d and e have
// reduce loops their guard narrows, so the whole run falls back to one pass
// each.
const char* const kJamRuns = R"(
def one_pass(float(N, 40) x, float(16, 40) w) -> (a, b) {
  a(n, c) +=! w(c, r) + x?(n, r + n) where n in 0:N
  b(n, c) +=! w(c, r) + x?(n, r - n) where n in 0:N
}
def narrowed(float(N, 40) x, float(16, 40) w) -> (a, b, d, e) {
  a(n, c) +=! w(c, r) + x?(n, r + n) where n in 0:N
  b(n, c) +=! w(c, r) + x?(n, r - n) where n in 0:N
  d(n, c) +=! exp(w(c, r)) * x?(n, r + n) where n in 0:N
  e(n, c) +=! exp(w(c, r)) * x?(n, r - n) where n in 0:N
}
)";

// Batch norm's normalisation, a residual and a ReLU, both outputs: one nest
// sharing all four loops, the per-channel reads loaded above the last.
const char* const kSharedRow = R"(
def bn_relu(float(B, 16, 8, 8) x, float(B, 16, 8, 8) r, float(16) m, float(16) v) -> (s, y) {
  s(b, c, h, w) = (x(b, c, h, w) - m(c)) * rsqrt(v(c) + 1e-5) + r(b, c, h, w)
  y(b, c, h, w) = fmax(s(b, c, h, w), 0)
}
)";

void strip_schedule(std::vector<ir::Stmt>& body) {
  for (ir::Stmt& s : body) {
    s.annotations.inner_loops = 0;
    s.annotations.nest = 0;
    s.annotations.jam = 0;
    s.annotations.lanes = 0;
    s.annotations.scan = 0;
    if (s.kind == ir::StmtKind::Loop) strip_schedule(s.loop->body);
  }
}

bool has_schedule(const std::vector<ir::Stmt>& body) {
  for (const ir::Stmt& s : body) {
    if (s.annotations.inner_loops > 0 || s.annotations.nest > 0 || s.annotations.jam > 0 ||
        s.annotations.lanes > 0 || s.annotations.scan > 0)
      return true;
    if (s.kind == ir::StmtKind::Loop && has_schedule(s.loop->body)) return true;
  }
  return false;
}

ir::Module load_model(const std::string& path) {
  return lang::compile_source(SourceFile::read(tenet::testing::source_path(path)));
}

ir::Module gradient_module(const ir::Module& m, const std::string& fn) {
  ad::GradRequest req;
  req.vjp = true;
  ir::Module out;
  out.functions.push_back(ad::differentiate(m, fn, req));
  return out;
}

/// Compiles `fn` of `m` after the pipeline, once as scheduled and once with
/// the schedule's attributes removed, and expects bitwise equal outputs on
/// the same inputs, and outputs close to the interpreter's.
void expect_schedule_changes_no_bit(ir::Module m, const std::string& fn,
                                    const ir::SizeBindings& sizes) {
  SCOPED_TRACE(fn);
  driver::optimise(m);
  ASSERT_TRUE(has_schedule(m.find(fn)->body)) << "nothing was scheduled";
  ir::Module plain = m;
  for (ir::Function& f : plain.functions) {
    f = f.clone();
    strip_schedule(f.body);
  }
  jit::CompiledFunction scheduled = driver::jit_compile(m, fn, test_jit_options());
  jit::CompiledFunction unscheduled = driver::jit_compile(plain, fn, test_jit_options());
  std::vector<Tensor> inputs = ir::random_inputs(*m.find(fn), sizes, 17);
  std::vector<Tensor> a = scheduled.run(inputs, sizes);
  std::vector<Tensor> b = unscheduled.run(inputs, sizes);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].nbytes(), b[i].nbytes());
    EXPECT_EQ(std::memcmp(a[i].raw(), b[i].raw(), a[i].nbytes()), 0)
        << "output " << m.find(fn)->output_names[i] << " differs between the two loop orders";
  }
  expect_matches_interpreter(scheduled, sizes, 17);
}

TEST(Schedule, RoutingStepIsBitwiseTheDefaultOrder) {
  expect_schedule_changes_no_bit(compile_tn(kRoutingStep), "routing_step", {{"B", 3}, {"T", 40}});
}

TEST(Schedule, RoutingForwardAndGradientAreBitwiseTheDefaultOrder) {
  const ir::SizeBindings sizes = {{"B", 2}, {"I", 24}, {"J", 10}, {"E", 16}};
  ir::Module routing = load_model("models/routing.tn");
  expect_schedule_changes_no_bit(routing, "routing", sizes);
  expect_schedule_changes_no_bit(gradient_module(routing, "routing"), "routing_grad", sizes);
}

TEST(Schedule, SoftmaxGradientIsBitwiseTheDefaultOrder) {
  expect_schedule_changes_no_bit(gradient_module(load_model("models/softmax.tn"), "softmax"),
                                 "softmax_grad", {{"N", 5}, {"K", 7}});
}

TEST(Schedule, JammedStatisticsAndSoftmaxAreBitwiseTheDefaultOrder) {
  ir::Module m = compile_tn(kJammed);
  expect_schedule_changes_no_bit(m, "norms", {{"B", 3}});
  expect_schedule_changes_no_bit(gradient_module(m, "norms"), "norms_grad", {{"B", 3}});
}

TEST(Schedule, ReadsHoistedAboveASharedLoopAreBitwiseTheDefaultOrder) {
  expect_schedule_changes_no_bit(compile_tn(kSharedRow), "bn_relu", {{"B", 3}});
}

TEST(Schedule, JamRunsAreBitwiseTheDefaultOrder) {
  const ir::Module m = compile_tn(kJamRuns);
  for (const char* fn : {"one_pass", "narrowed"}) {
    ir::Module scheduled = m;
    driver::optimise(scheduled);
    const std::string source = driver::emit_cpp(scheduled).source;
    const size_t begin = source.find("void tenet_" + std::string(fn) + "__with_workspace(");
    const bool one = source.find("in one pass", begin) < source.find("\n}\n", begin);
    EXPECT_EQ(one, std::string(fn) == "one_pass") << fn;
    expect_schedule_changes_no_bit(m, fn, {{"N", 45}});
  }
}

TEST(Schedule, ColumnSumTilesAreBitwiseTheDefaultOrder) {
  // Layer norm's weight and bias gradients: sums over rows, 320 columns
  // accumulated in place, cut into tiles of 64 that the threads share.
  const ir::Module m = compile_tn(R"(
def columns(float(B, 12, 320) dy, float(B, 12, 320) x) -> (dw, db) {
  dw(k) +=! dy(b, t, k) * x(b, t, k)
  db(k) +=! dy(b, t, k)
}
)");
  ir::Module scheduled = m;
  driver::optimise(scheduled);
  const std::string source = driver::emit_cpp(scheduled).source;
  EXPECT_NE(source.find("t_k_tile += 64)"), std::string::npos) << source;
  expect_schedule_changes_no_bit(m, "columns", {{"B", 7}});
}

TEST(Schedule, LanesGiveTheDefaultOrdersBitsWithZerosNaNAndInfinities) {
  // Rows of 50: three blocks of 16 lanes and 2 terms after them.
  const ir::Module m = compile_tn(R"(
def extremes(float(N, 50) x, double(N, 50) d, int32(N, 50) k) -> (hi, lo, dhi, dlo, khi) {
  hi(n) max=! x(n, r)
  lo(n) min=! x(n, r)
  dhi(n) max=! d(n, r)
  dlo(n) min=! d(n, r)
  khi(n) max=! k(n, r)
}
)");
  ir::Module scheduled = m;
  driver::optimise(scheduled);
  const std::string source = driver::emit_cpp(scheduled).source;
  EXPECT_NE(source.find("tenet::fold_lanes<true, 16>"), std::string::npos) << source;
  EXPECT_NE(source.find("tenet::fold_lanes<false, 16>"), std::string::npos) << source;
  EXPECT_NE(source.find("int32_t t_r_lanes[16]"), std::string::npos) << source;
  // Rows of ties between +0 and -0 (in both orders, in lanes and in the
  // rest), NaN (ignored), only NaN, infinities, and plain numbers.
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = HUGE_VALF;
  const std::vector<std::vector<float>> rows = {
      {-0.0f, 0.0f}, {0.0f, -0.0f},     {-0.0f},
      {0.0f},        {nan, -3.0f, nan}, {nan},
      {-inf, nan},   {inf, -inf},       {1.5f, -2.5f, 7.0f, -0.0f}};
  const int64_t n = int64_t(rows.size()) * 3;
  Tensor x(ElemType::F32, {n, 50}), d(ElemType::F64, {n, 50}), k(ElemType::I32, {n, 50});
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<float>& row = rows[size_t(i) % rows.size()];
    for (int64_t r = 0; r < 50; ++r) {
      // Fill patterns: alternating lanes (ties meet in the last fold), the
      // halves of the lanes alternating (they meet in the first), and the
      // row reversed (ties in the rest of the row).
      const int64_t pattern = i / int64_t(rows.size());
      const int64_t at = pattern == 0 ? r : pattern == 1 ? r / 8 : 49 - r;
      const float v = row[size_t(at) % row.size()];
      x.data<float>()[i * 50 + r] = v;
      d.data<double>()[i * 50 + r] = double(v);
      k.data<int32_t>()[i * 50 + r] = int32_t((i * 131 + at * 17) % 1000) - 500;
    }
  }
  const ir::SizeBindings sizes = {{"N", n}};
  ir::Module plain = scheduled;
  for (ir::Function& f : plain.functions) {
    f = f.clone();
    strip_schedule(f.body);
  }
  const std::vector<Tensor> expected = ir::interpret(*m.find("extremes"), {x, d, k}, sizes);
  for (const ir::Module* module : {&scheduled, &plain}) {
    jit::CompiledFunction f = driver::jit_compile(*module, "extremes", test_jit_options());
    const std::vector<Tensor> actual = f.run({x, d, k}, sizes);
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t o = 0; o < actual.size(); ++o)
      EXPECT_EQ(std::memcmp(actual[o].raw(), expected[o].raw(), actual[o].nbytes()), 0)
          << "output " << o << (module == &plain ? " without lanes" : " in lanes")
          << " differs from the interpreter's bits";
  }
  // The interpreter's own rule: +0 above -0 in either order, NaN ignored.
  EXPECT_FALSE(std::signbit(expected[0].data<float>()[0]));
  EXPECT_FALSE(std::signbit(expected[0].data<float>()[1]));
  EXPECT_TRUE(std::signbit(expected[1].data<float>()[0]));
  EXPECT_TRUE(std::signbit(expected[1].data<float>()[1]));
  EXPECT_EQ(expected[0].data<float>()[4], -3.0f);
  EXPECT_EQ(expected[0].data<float>()[5], -inf);  // only NaN: the identity
}

// A float32 sum in lanes adds its terms in the order the annotation gives
// (docs/language.md): the interpreter follows it, so compiled code and the
// interpreter agree bit for bit with lanes and without, and a row whose
// float64 sum depends on the order shows which order each one took.
TEST(Schedule, SumLanesAddInTheLanguagesOrderInTheInterpreterAndCompiledCode) {
  // Rows of 50 (three blocks of 16 and 2 terms after them); rows of 40 under
  // an outer reduce index (two blocks and 8 after, three times); a sum onto
  // an initial value.
  const ir::Module m = compile_tn(R"(
def sums(float(N, 50) x, float(N, 3, 40) y) -> (s, t, u) {
  s(n) +=! x(n, r)
  t(n) +=! y(n, q, r)
  u(n) = x(n, 1)
  u(n) += x(n, r)
}
)");
  ir::Module scheduled = m;
  driver::optimise(scheduled);
  const std::string source = driver::emit_cpp(scheduled).source;
  size_t found = 0;  // once per statement
  for (size_t at = source.find("tenet::sum_lanes<16>"); at != std::string::npos;
       at = source.find("tenet::sum_lanes<16>", at + 1))
    ++found;
  EXPECT_EQ(found, 3u) << source;
  ir::Module plain = scheduled;
  for (ir::Function& f : plain.functions) {
    f = f.clone();
    strip_schedule(f.body);
  }
  const int64_t n = 64;
  Tensor x(ElemType::F32, {n, 50}), y(ElemType::F32, {n, 3, 40});
  uint32_t state = 12345;
  auto uniform = [&] {
    state = state * 1664525u + 1013904223u;
    return float(state >> 8) / float(1 << 24) * 2.0f - 1.0f;
  };
  for (int64_t e = 0; e < x.numel(); ++e) x.data<float>()[e] = uniform();
  for (int64_t e = 0; e < y.numel(); ++e) y.data<float>()[e] = uniform();
  // In every row +2^40 and -2^40 somewhere: the terms added while one of them
  // is in a partial sum lose their low bits there (2^40's ulp in float64 is
  // 2^-12), so which terms share a lane, and the order of the fold, show in
  // the float32 result.
  auto at = [&](int64_t extent) {
    state = state * 1664525u + 1013904223u;
    return int64_t(state >> 8) % extent;
  };
  for (int64_t i = 1; i < n; ++i) {
    x.data<float>()[i * 50 + at(50)] = 0x1p40f;
    x.data<float>()[i * 50 + at(50)] = -0x1p40f;
    y.data<float>()[i * 120 + at(120)] = 0x1p40f;
    y.data<float>()[i * 120 + at(120)] = -0x1p40f;
  }
  // Row 0: 2^60 + 1 - 2^60 is 0 in float64 added in order (2^60 + 1 rounds to
  // 2^60), and 1 in lanes (2^60 and -2^60 meet in lane 0, the 1 is in lane 1).
  float* row = x.data<float>();
  std::fill(row, row + 50, 0.0f);
  row[0] = 0x1p60f, row[1] = 1.0f, row[16] = -0x1p60f;
  // Row 0 of y: the same terms, in three rows of 40 under q; in lanes, 2^60
  // (q = 0, r = 0) and -2^60 (q = 2, r = 16) meet in lane 0; the 1 falls in
  // the 8 terms after the lanes (q = 1, r = 35), added to the accumulator.
  float* rows = y.data<float>();
  std::fill(rows, rows + 120, 0.0f);
  rows[0] = 0x1p60f, rows[40 + 35] = 1.0f, rows[80 + 16] = -0x1p60f;
  const ir::SizeBindings sizes = {{"N", n}};
  std::vector<Tensor> in_order;
  for (const ir::Module* module : {&plain, &scheduled}) {
    const bool lanes = module == &scheduled;
    const std::vector<Tensor> expected = ir::interpret(*module->find("sums"), {x, y}, sizes);
    if (!lanes) in_order = expected;
    jit::CompiledFunction f = driver::jit_compile(*module, "sums", test_jit_options());
    const std::vector<Tensor> actual = f.run({x, y}, sizes);
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t o = 0; o < actual.size(); ++o)
      EXPECT_EQ(std::memcmp(actual[o].raw(), expected[o].raw(), actual[o].nbytes()), 0)
          << "output " << o << (lanes ? " in lanes" : " without lanes")
          << " differs from the interpreter's bits";
    EXPECT_EQ(expected[0].data<float>()[0], lanes ? 1.0f : 0.0f) << (lanes ? "lanes" : "plain");
    EXPECT_EQ(expected[1].data<float>()[0], lanes ? 1.0f : 0.0f) << (lanes ? "lanes" : "plain");
    // u starts from x(0, 1) = 1, which 2^60 absorbs in order (0); in lanes
    // the accumulator keeps it, and the lanes add 1 (2).
    EXPECT_EQ(expected[2].data<float>()[0], lanes ? 2.0f : 0.0f) << (lanes ? "lanes" : "plain");
  }
  // The order of docs/language.md, written out: the terms of each block of 16
  // in lanes r % 16, the rest into the accumulator, the lanes folded in
  // halves (k + 8 onto k, then k + 4, k + 2, k + 1), then added.
  const std::vector<Tensor> in_lanes = ir::interpret(*scheduled.find("sums"), {x, y}, sizes);
  auto by_the_rule = [](const float* terms, int64_t outer, int64_t length, double start) {
    double lanes[16] = {}, acc = start;
    const int64_t split = length / 16 * 16;
    for (int64_t q = 0; q < outer; ++q)
      for (int64_t r = 0; r < length; ++r) {
        const double term = terms[q * length + r];
        if (r < split)
          lanes[r % 16] += term;
        else
          acc += term;
      }
    for (int64_t width : {8, 4, 2, 1})
      for (int64_t k = 0; k < width; ++k) lanes[k] += lanes[k + width];
    return float(acc + lanes[0]);
  };
  for (int64_t i = 0; i < n; ++i) {
    const float* xr = x.data<float>() + i * 50;
    EXPECT_EQ(in_lanes[0].data<float>()[i], by_the_rule(xr, 1, 50, 0.0)) << "s, row " << i;
    EXPECT_EQ(in_lanes[1].data<float>()[i], by_the_rule(y.data<float>() + i * 120, 3, 40, 0.0))
        << "t, row " << i;
    EXPECT_EQ(in_lanes[2].data<float>()[i], by_the_rule(xr, 1, 50, double(xr[1])))
        << "u, row " << i;
  }
  // The random rows depend on the order: most differ from the sums in order.
  for (size_t o = 0; o < in_lanes.size(); ++o) {
    int64_t differ = 0;
    for (int64_t i = 0; i < n; ++i)
      differ += in_lanes[o].data<float>()[i] != in_order[o].data<float>()[i] ? 1 : 0;
    EXPECT_GT(differ, n / 2) << "output " << o;
  }
}

TEST(Schedule, ShortRowsAndDataMasksRunInLanesLikeTheInterpreter) {
  // Batch norm's sums per channel over 8x8 and 16x16 images: rows of 8 and 16
  // terms, the lanes running on across the rows of b and h; a sum masked by
  // a comparison of data read at w (a ReLU's gradient) runs in lanes; one
  // masked by a test of w itself does not (the test would narrow w's loop).
  const ir::Module m = compile_tn(R"(
def stats(float(B, 16, 8, 8) x, float(B, 16, 16, 16) z, float(B, 16, 8, 8) g)
    -> (m8, m16, masked, border) {
  m8(c) +=! x(b, c, h, w)
  m16(c) +=! z(b, c, h, w)
  masked(c) +=! select(x(b, c, h, w) > 0, g(b, c, h, w), 0)
  border(c) +=! select(w > 2, g(b, c, h, w), 0)
}
)");
  ir::Module scheduled = m;
  driver::optimise(scheduled);
  const std::string source = driver::emit_cpp(scheduled).source;
  auto count = [&](const std::string& text) {
    size_t found = 0;
    for (size_t at = source.find(text); at != std::string::npos; at = source.find(text, at + 1))
      ++found;
    return found;
  };
  EXPECT_EQ(count("tenet::sum_lanes<8>"), 2u) << source;   // m8, masked
  EXPECT_EQ(count("tenet::sum_lanes<16>"), 1u) << source;  // m16
  const int64_t b = 5;
  Tensor x(ElemType::F32, {b, 16, 8, 8}), z(ElemType::F32, {b, 16, 16, 16}),
      g(ElemType::F32, {b, 16, 8, 8});
  uint32_t state = 777;
  for (Tensor* t : {&x, &z, &g})
    for (int64_t e = 0; e < t->numel(); ++e) {
      state = state * 1664525u + 1013904223u;
      // Wide magnitudes, so the order of the additions shows in the bits.
      t->data<float>()[e] =
          (float(state >> 8) / float(1 << 24) - 0.5f) * (e % 7 == 0 ? 1e7f : 1.0f);
    }
  const ir::SizeBindings sizes = {{"B", b}};
  const std::vector<Tensor> expected = ir::interpret(*scheduled.find("stats"), {x, z, g}, sizes);
  jit::CompiledFunction f = driver::jit_compile(scheduled, "stats", test_jit_options());
  const std::vector<Tensor> actual = f.run({x, z, g}, sizes);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t o = 0; o < actual.size(); ++o)
    EXPECT_EQ(std::memcmp(actual[o].raw(), expected[o].raw(), actual[o].nbytes()), 0)
        << "output " << o << " differs from the interpreter's bits";
}

/// The body of `fn`'s workspace entry in the generated code of `source`:
/// the statements as scheduled (the wrappers around it are the ABI's,
/// tested elsewhere).
void expect_function_golden(ir::Module m, const std::string& fn, const std::string& golden) {
  driver::optimise(m);
  const std::string code = driver::emit_cpp(m).source;
  const size_t begin = code.find("extern \"C\" void tenet_" + fn + "__with_workspace(");
  ASSERT_NE(begin, std::string::npos);
  const size_t end = code.find("\n}\n", begin);
  ASSERT_NE(end, std::string::npos);
  tenet::testing::expect_golden(golden, code.substr(begin, end + 3 - begin));
}

TEST(Schedule, GeneratedCodeGolden) {
  expect_function_golden(compile_tn(kRoutingStep), "routing_step",
                         "codegen/routing_step_schedule.cpp.expected");
  expect_function_golden(compile_tn(kJammed), "norms", "codegen/jammed_norms.cpp.expected");
  expect_function_golden(compile_tn(kSharedRow), "bn_relu", "codegen/shared_row.cpp.expected");
  // The gradient's batch-norm sums: four statements in one pass.
  expect_function_golden(gradient_module(compile_tn(kJammed), "norms"), "norms_grad",
                         "codegen/jammed_norms_grad.cpp.expected");
}

/// `tenet ARGS` run from the source tree with OMP_NUM_THREADS=threads.
tenet::testing::CommandResult run_tenet(const std::string& args, int threads) {
  return tenet::testing::run_command("cd " + tenet::testing::source_path("") +
                                     " && OMP_NUM_THREADS=" + std::to_string(threads) + " " +
                                     tenet::testing::tenet_binary() + " " + args);
}

TEST(Schedule, GradientsAreBitwiseTheSameWithOneAndTwoThreads) {
  // Large enough that every nest runs in parallel.
  const std::string dir = fresh_folder("schedule_threads");
  const char* names[] = {"v", "d_uh"};
  std::string first;
  int run = 0;
  for (int threads : {1, 2, 2}) {
    const std::string out = dir + "/run" + std::to_string(run++);
    tenet::testing::CommandResult r = run_tenet(
        "run models/routing.tn --grad --vjp --backend cpp --seed 5 "
        "--sizes B=4,I=64,J=10,E=16 --save " +
            out,
        threads);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string bytes;
    for (const char* n : names) bytes += tenet::testing::read_file(out + "/" + n + ".npy");
    EXPECT_GT(bytes.size(), size_t(4 * 4 * 64 * 10 * 16));
    if (first.empty())
      first = bytes;
    else
      EXPECT_TRUE(bytes == first) << threads << " threads give other bits";
  }
}

TEST(SaveOrRecompute, PrintedDecisionsGolden) {
  // Softmax: what the backward reads is saved (reductions, an exp read four
  // times, an output); margin loss: the cheap fmax values are recomputed.
  struct Case {
    const char* args;
    const char* golden;
  };
  for (const Case& c : {Case{"print models/softmax.tn --grad softmax --vjp --stage fuse",
                             "ir/softmax.grad.fuse.ir"},
                        Case{"print models/zoo/margin_loss.tn --grad margin_loss --stage fuse",
                             "ir/margin_loss.grad.fuse.ir"},
                        // The same decisions, cut (ad/split.h): the forward returns what
                        // the backward reads, the backward takes it.
                        Case{"print models/softmax.tn --grad softmax --vjp --half forward "
                             "--stage split",
                             "ir/softmax.vjp.forward.ir"},
                        Case{"print models/softmax.tn --grad softmax --vjp --half backward "
                             "--stage split",
                             "ir/softmax.vjp.backward.ir"}}) {
    tenet::testing::CommandResult r = run_tenet(c.args, 1);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    tenet::testing::expect_golden(c.golden, r.out);
  }
}

}  // namespace
}  // namespace tenet::codegen::testing
