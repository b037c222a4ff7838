// The memory plan: the run-time planner (tenet::plan_workspace) and the
// chunk sizes of runtime/tenet_runtime.h, the lifetimes the emitter records
// (codegen/memory_plan.h), and compiled programs whose temporaries share
// memory or whose GEMM buffers run in chunks, against the interpreter.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "ad/grad.h"
#include "driver/driver.h"
#include "jit/executable.h"
#include "lower/memory_plan.h"
#include "passes/pipeline.h"
#include "runtime/tenet_runtime.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/codegen/contraction_util.h"
#include "tests/support/golden.h"

namespace tenet::codegen::testing {
namespace {

// ---- tenet::plan_workspace --------------------------------------------------

bool live_together(const tenet::WorkspaceTenant& a, const tenet::WorkspaceTenant& b) {
  return a.first <= b.last && b.first <= a.last;
}

/// Plans `tenants` and checks what the plan promises: aligned offsets,
/// tenants live together never overlap, the total covers every tenant and is
/// at least what the statement with the most live bytes needs.
template <size_t N>
int64_t plan_and_check(const tenet::WorkspaceTenant (&tenants)[N]) {
  int64_t offsets[N];
  const int64_t total = tenet::plan_workspace(tenants, offsets);
  int64_t end = 0;
  for (size_t i = 0; i < N; ++i) {
    EXPECT_EQ(offsets[i] % tenet::kWorkspaceAlignment, 0) << "tenant " << i;
    end = std::max(end, offsets[i] + tenants[i].bytes);
    for (size_t j = 0; j < i; ++j) {
      if (!live_together(tenants[i], tenants[j])) continue;
      const bool apart = offsets[i] + tenants[i].bytes <= offsets[j] ||
                         offsets[j] + tenants[j].bytes <= offsets[i];
      EXPECT_TRUE(apart) << "tenants " << j << " and " << i << " are live together and overlap";
    }
  }
  EXPECT_EQ(total, end);
  int last = 0;
  for (const auto& t : tenants) last = std::max(last, t.last);
  for (int at = 0; at <= last; ++at) {
    int64_t live = 0;
    for (const auto& t : tenants) live += t.first <= at && at <= t.last ? t.bytes : 0;
    EXPECT_GE(total, live) << "statement " << at;
  }
  return total;
}

TEST(PlanWorkspace, TenantsThatAreNeverLiveTogetherShareMemory) {
  // A chain: each temporary read only by the next statement.
  const tenet::WorkspaceTenant chain[] = {{640, 0, 1}, {640, 1, 2}, {640, 2, 3}, {640, 3, 4}};
  EXPECT_EQ(plan_and_check(chain), 2 * 640);
  // All live together: nothing shared.
  const tenet::WorkspaceTenant together[] = {{64, 0, 5}, {128, 1, 5}, {192, 2, 5}};
  EXPECT_EQ(plan_and_check(together), 64 + 128 + 192);
  // A large tenant between two smaller ones that are each live with it.
  const tenet::WorkspaceTenant sandwich[] = {{256, 0, 1}, {1024, 1, 2}, {256, 2, 3}};
  EXPECT_EQ(plan_and_check(sandwich), 1024 + 256);
}

TEST(PlanWorkspace, RandomLifetimesNeverOverlapInMemory) {
  uint64_t state = 12345;
  auto next = [&](int64_t n) {  // splitmix-style LCG, deterministic
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return int64_t((state >> 33) % uint64_t(n));
  };
  for (int round = 0; round < 50; ++round) {
    tenet::WorkspaceTenant tenants[40];
    int64_t sum = 0;
    for (auto& t : tenants) {
      t.bytes = 64 * (1 + next(100));
      t.first = int(next(60));
      t.last = t.first + int(next(10));
      sum += t.bytes;
    }
    EXPECT_LE(plan_and_check(tenants), sum);
  }
}

TEST(PlanWorkspace, SizesBeyondTheCapAreRefusedNotWrapped) {
  EXPECT_EQ(tenet::workspace_bytes<float>(int64_t(1) << 58), int64_t(1) << 60);
  EXPECT_EQ(tenet::workspace_bytes<float>((int64_t(1) << 58) + 1), -1);
  EXPECT_EQ(tenet::workspace_bytes<float>(int64_t(1) << 62), -1);  // 2^64 bytes would wrap to 0
  EXPECT_EQ(tenet::workspace_bytes<double>(-1), -1);
  const tenet::WorkspaceTenant refused[] = {{640, 0, 1}, {-1, 1, 2}};
  int64_t two[2];
  EXPECT_EQ(tenet::plan_workspace(refused, two), -1);
  // Eight tenants of 2^60 bytes live together: 2^63 bytes in all.
  const int64_t cap = tenet::kMaxWorkspaceBytes;
  const tenet::WorkspaceTenant together[] = {{cap, 0, 1}, {cap, 0, 1}, {cap, 0, 1}, {cap, 0, 1},
                                             {cap, 0, 1}, {cap, 0, 1}, {cap, 0, 1}, {cap, 0, 1}};
  int64_t eight[8];
  EXPECT_EQ(tenet::plan_workspace(together, eight), -1);
  // Never live together, they share one place.
  const tenet::WorkspaceTenant apart[] = {{cap, 0, 0}, {cap, 1, 1}, {cap, 2, 2}};
  EXPECT_EQ(plan_and_check(apart), cap);
}

TEST(PlanWorkspace, ChunkExtents) {
  // CapsNet's PrimaryCaps im2col at batch 100: 3 MB per image, 32 MiB.
  EXPECT_EQ(tenet::chunk_extent(100, 2985984, int64_t(32) << 20), 10);
  // Everything fits: one chunk.
  EXPECT_EQ(tenet::chunk_extent(100, 1000, int64_t(32) << 20), 100);
  // One slice alone exceeds the budget: chunks of one.
  EXPECT_EQ(tenet::chunk_extent(7, int64_t(64) << 20, int64_t(32) << 20), 1);
  // Evened out: at most 11 fit, 100 = 10 chunks of 10 rather than 9 of 11 and one of 1.
  EXPECT_EQ(tenet::chunk_extent(100, 100, 1100), 10);
  // Degenerate extents still give a positive step.
  EXPECT_EQ(tenet::chunk_extent(0, 100, 1000), 1);
}

// ---- LifetimeRecorder --------------------------------------------------------

TEST(Lifetimes, LoopsKeepOutsideValuesLiveAcrossAllIterations) {
  lower::LifetimeRecorder r;
  r.next_statement();  // 0: a = ...
  r.define(0);
  r.next_statement();  // 1: b = f(a)
  r.use(0);
  r.define(1);
  r.begin_loop();
  r.next_statement();  // 2: t = g(a)   (a from before the loop)
  r.use(0);
  r.define(2);
  r.next_statement();  // 3: u = h(t)
  r.use(2);
  r.define(3);
  r.begin_loop();
  r.next_statement();  // 4: v = k(u)   (u from the outer body)
  r.use(3);
  r.define(4);
  r.next_statement();  // 5: w = m(v)
  r.use(4);
  r.define(5);
  r.end_loop();
  r.next_statement();  // 6: the outer body ends
  r.end_loop();
  r.next_statement();  // 7: y = n(b)
  r.use(1);
  const std::vector<lower::Lifetime>& l = r.lifetimes();
  ASSERT_EQ(l.size(), 6u);
  EXPECT_EQ(l[0].first, 0);
  EXPECT_EQ(l[0].last, 6);  // read in the loop: live to its end
  EXPECT_EQ(l[1].last, 7);  // read after the loop only
  EXPECT_EQ(l[2].last, 3);  // defined and read in one iteration
  EXPECT_EQ(l[3].last, 5);  // read in the inner loop: live to its end
  EXPECT_EQ(l[4].last, 5);
  EXPECT_EQ(l[5].first, 5);
  EXPECT_EQ(l[5].last, 5);  // written, never read
}

// ---- Compiled programs -----------------------------------------------------

/// Runs `fn` of `m` compiled as the checker made it (no pass fuses its
/// temporaries away) and interpreted, on the same inputs; returns the
/// workspace bytes of the compiled function at `sizes`.
int64_t expect_compiled_matches(const ir::Module& m, const std::string& fn,
                                const ir::SizeBindings& sizes) {
  jit::CompiledFunction f = driver::jit_compile(m, fn, test_jit_options());
  expect_matches_interpreter(f, sizes, 3, 1e-5);
  return jit::Executable(f, sizes).workspace_bytes();
}

TEST(MemoryPlan, TemporariesShareMemory) {
  // Twelve temporaries of one size, each read by the next statement; `a`
  // is also read at the end, so it stays live throughout.
  ir::Module m = compile_tn(R"(
def chain(float(N, K) x) -> (y) {
  a(n, k) = x(n, k) * 2
  b(n, k) = a(n, k) + 1
  c(n, k) = b(n, k) * b(n, k)
  d(n, k) = c(n, k) - x(n, k)
  e(n, k) = exp(-d(n, k))
  f(n, k) = e(n, k) * 3
  g(n, k) = f(n, k) + c(n, k)
  h(n, k) = sqrt(g(n, k) * g(n, k) + 1)
  i(n, k) = h(n, k) / 2
  j(n, k) = i(n, k) - 1
  l(n, k) = j(n, k) * j(n, k)
  s(n) +=! l(n, k)
  y(n, k) = l(n, k) / (1 + s(n)) + a(n, k)
}
)");
  const int64_t one = tenet::workspace_bytes<float>(37 * 53);
  const int64_t bytes = expect_compiled_matches(m, "chain", {{"N", 37}, {"K", 53}});
  // Without reuse: 12 * one (+ s). With it: a, and at most three others at once.
  EXPECT_LE(bytes, 4 * one + tenet::workspace_bytes<float>(37));
}

TEST(MemoryPlan, AReadInsideAComputedIndexKeepsItsTensorLive) {
  // idx is read only inside the computed index of t's read (torch's roll):
  // t must not take its memory (it did, and read indices it had overwritten).
  ir::Module m = compile_tn(R"(
def roll_conv(float(2, 4, 3, 3) w, float(B, 4, 3, 3) x) -> (y) {
  a(k) = int64(k) where k in 0:3
  idx(k) = (a(k) + 2) % 3
  t(n, c, k, l) = x(n, c, idx(k), l)
  y(n, o, k, l) +=! t(n, c, k + p, l + q) * w(o, c, p, q) where k in 0:1, l in 0:1
}
)");
  expect_compiled_matches(m, "roll_conv", {{"B", 2}});
}

// A top-level reshape that is not an output is a view: no memory of its
// own, and its source's memory stays live while the view is read (here the
// temporaries b..e would otherwise reuse a's). In a loop body it is a copy.
TEST(MemoryPlan, ReshapesAreViewsThatKeepTheirSourceLive) {
  ir::Module m = compile_tn(R"(
def views(float(N, K) x) -> (y, z) {
  a(n, k) = x(n, k) * 2
  v = reshape(a, N * K)
  flat_x = reshape(x, K, N)
  b(n, k) = a(n, k) + 1
  c(n, k) = b(n, k) * b(n, k)
  d(n, k) = c(n, k) - x(n, k)
  e(n, k) = exp(-d(n, k))
  s(n) +=! e(n, k)
  y(n, k) = e(n, k) / (1 + s(n)) + v(K * n + k) + flat_x(k, n)
  z = reshape(x, N, K)
  for it in 0:2 {
    w = reshape(z, K, N)
    z = reshape(w, N, K)
    z(n, k) = z(n, k) * 0.5
  }
}
)");
  const std::string cpp = driver::emit_cpp(m).source;
  EXPECT_NE(cpp.find("const float* const t_v = t_a;  // a view"), std::string::npos) << cpp;
  EXPECT_NE(cpp.find("const float* const t_flat_x = t_x;  // a view"), std::string::npos) << cpp;
  EXPECT_EQ(cpp.find("t_w = t_"), std::string::npos) << cpp;  // in the loop: copied
  const int64_t one = tenet::workspace_bytes<float>(37 * 53);
  const int64_t bytes = expect_compiled_matches(m, "views", {{"N", 37}, {"K", 53}});
  EXPECT_LE(bytes, 9 * one);
}

TEST(MemoryPlan, TemporariesInLoopsAndCarriedBuffers) {
  // Body temporaries share memory within an iteration; x and the carried
  // state must survive every iteration.
  ir::Module m = compile_tn(R"(
def looped(float(N, K) x) -> (y) {
  s(n, k) = x(n, k) * 0.5
  for it in 0:4 {
    t(n, k) = s(n, k) * 0.5
    u(n, k) = t(n, k) + x(n, k)
    v(n, k) = u(n, k) * u(n, k)
    w(n, k) = v(n, k) - t(n, k)
    s(n, k) = tanh(w(n, k))
  }
  z(n, k) = s(n, k) * s(n, k)
  y(n, k) = z(n, k) + x(n, k)
}
)");
  const int64_t one = tenet::workspace_bytes<float>(19 * 23);
  const int64_t bytes = expect_compiled_matches(m, "looped", {{"N", 19}, {"K", 23}});
  EXPECT_LT(bytes, 8 * one);  // 9 tenants (the carried state takes two buffers) without reuse
}

/// Twelve loops in a row, each carrying `a` through a nested loop (so the
/// outer carry is a copy into buffers of its own) and swapping it with `b`;
/// `r` is read after all of them.
std::string loops_in_a_row() {
  std::string src = "def rows(float(N) x) -> (y) {\n  a(i) = x(i)\n  b(i) = 2 * x(i)\n";
  src += "  r(i) = x(i) * x(i)\n";
  for (int l = 0; l < 12; ++l)
    src += "  for o" + std::to_string(l) + " in 0:2 {\n    for p" + std::to_string(l) +
           " in 0:2 { a(i) = a(i) * 0.5 + b(i) }\n    b(i) = a(i) - b(i)\n  }\n";
  return src + "  y(i) = a(i) + b(i) * r(i)\n}\n";
}

TEST(MemoryPlan, CarriedResultsOfLoopsInARowDoNotPinEarlierBuffers) {
  // After a loop of at least one iteration a carried result is in the loop's
  // own buffers, never in the init's: reading it later keeps the earlier
  // loops' buffers alive no longer. (It did: every loop's copy buffers lived
  // to the end, and the alias lists grew by one slot per loop.)
  const int64_t n = 301;
  const int64_t one = tenet::workspace_bytes<float>(n);
  const int64_t bytes = expect_compiled_matches(compile_tn(loops_in_a_row()), "rows", {{"N", n}});
  // Pinned, the 12 loops' double buffers alone would take 48 * one.
  EXPECT_LE(bytes, 16 * one);
}

/// The vector-Jacobian product program of `fn` in `path`, alone in a module.
ir::Module gradient(const std::string& path, const std::string& fn) {
  ir::Module m = compile_tn(tenet::testing::read_file(tenet::testing::source_path(path)));
  ad::GradRequest req;
  req.vjp = true;
  ir::Module out;
  out.functions.push_back(ad::differentiate(m, fn, req));
  return out;
}

/// JIT options whose GEMM buffers get at most `budget` bytes.
jit::JitOptions with_budget(int64_t budget) {
  jit::JitOptions options = test_jit_options();
  options.cpp.pack_budget_bytes = budget;
  return options;
}

int64_t workspace_bytes(const ir::Module& m, const std::string& fn, const ir::SizeBindings& sizes,
                        const jit::JitOptions& options) {
  ir::Module optimised;
  optimised.functions.push_back(m.find(fn)->clone());
  driver::optimise(optimised);
  return jit::Executable(driver::jit_compile(optimised, fn, options), sizes).workspace_bytes();
}

TEST(GemmChunks, StridedConvolutionAndItsGradients) {
  // The forward im2col (chunks along b), the weight gradient's (along the
  // columns' c) and the input gradient's split columns (along b), each far
  // over a 16 KiB budget.
  ir::Module g = gradient("models/conv2d.tn", "conv2d_stride2");
  const ir::SizeBindings sizes = {{"B", 5}, {"C", 6}, {"H", 13}, {"W", 12}, {"O", 8}};
  const jit::JitOptions small = with_budget(16 << 10);
  const std::string source =
      expect_gemm_matches_interpreter(g, "conv2d_stride2_grad", sizes, 3, 7, &small);
  size_t chunked = 0;
  for (size_t at = source.find("In chunks of at most"); at != std::string::npos;
       at = source.find("In chunks of at most", at + 1))
    ++chunked;
  EXPECT_EQ(chunked, 3u) << source;
  EXPECT_LT(workspace_bytes(g, "conv2d_stride2_grad", sizes, small),
            workspace_bytes(g, "conv2d_stride2_grad", sizes, with_budget(0)) / 2);
}

TEST(GemmChunks, ConvolutionWithPaddingGathersAndLoopsOfGemms) {
  // Stride 1: one GEMM per image (a loop index chunked); the guarded gather
  // runs as loops (its packed weight would be mostly zeros).
  ir::Module g = gradient("models/conv2d.tn", "conv2d");
  const jit::JitOptions small = with_budget(8 << 10);
  const std::string source = expect_gemm_matches_interpreter(
      g, "conv2d_grad", {{"B", 4}, {"C", 5}, {"H", 12}, {"W", 11}, {"O", 20}, {"KH", 3}, {"KW", 3}},
      2, 7, &small);
  EXPECT_NE(source.find("In chunks of at most"), std::string::npos);
}

TEST(GemmChunks, NoChunksWithinTheBudget) {
  // Constant sizes within the budget: no chunk loop at all.
  ir::Module m = compile_tn(R"(
def small_conv(float(2, 16, 20, 20) x, float(32, 16, 3, 3) w) -> (y) {
  y(b, o, i, j) +=! x(b, c, 2*i + ki, 2*j + kj) * w(o, c, ki, kj)
}
)");
  const std::string source = expect_gemm_matches_interpreter(m, "small_conv", {}, 1);
  EXPECT_EQ(source.find("In chunks"), std::string::npos);
}

}  // namespace
}  // namespace tenet::codegen::testing
