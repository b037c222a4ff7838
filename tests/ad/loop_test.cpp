// Loops with constant trip counts and carried tensors: AD unrolls them, so
// every iteration's values stay available (the tape); the printed IR marks
// each unrolled statement with ad = "unrolled it=k".
#include <gtest/gtest.h>

#include "ir/printer.h"
#include "tests/ad/ad_test_util.h"
#include "tests/support/golden.h"

namespace tenet::ad::testing {
namespace {

// Dynamic routing (Sabour et al.): three iterations of softmax over the
// routing logits, weighted sum, squash and agreement update; v is a live-out.
const char* kRouting = R"(
def routing(float(B, I, J, D) u) -> (v) {
  logits(n, i, j) = 0 where n in 0:B, i in 0:I, j in 0:J
  for it in 0:3 {
    m(n, i) max=! logits(n, i, j)
    e(n, i, j) = exp(logits(n, i, j) - m(n, i))
    t(n, i) +=! e(n, i, j)
    c(n, i, j) = e(n, i, j) / t(n, i)
    s(n, j, d) +=! c(n, i, j) * u(n, i, j, d)
    n2(n, j) +=! s(n, j, d) * s(n, j, d)
    v(n, j, d) = s(n, j, d) * sqrt(n2(n, j) + 1e-7) / (1 + n2(n, j))
    logits(n, i, j) += u(n, i, j, d) * v(n, j, d)
  }
}
)";

TEST(LoopGrad, ThreeIterationRouting) {
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = {{"B", 2}, {"I", 3}, {"J", 2}, {"D", 3}};
  GradcheckReport r = expect_gradcheck(kRouting, "routing", opt);
  EXPECT_EQ(r.inputs.at(0).checked, 36);
}

TEST(LoopGrad, UnrolledStatementsSayWhichIteration) {
  ir::Function g = differentiate(compile_fn(kRouting, "routing"), {{}, "", true});
  int unrolled[3] = {0, 0, 0};
  for (const ir::Stmt& s : g.body) {
    ASSERT_EQ(s.kind, ir::StmtKind::Compute) << "the gradient function has no loops";
    for (int k = 0; k < 3; ++k)
      if (s.annotations.ad == ir::AdOrigin::Unrolled &&
          s.annotations.ad_detail == "it=" + std::to_string(k))
        ++unrolled[k];
  }
  for (int k = 0; k < 3; ++k) EXPECT_EQ(unrolled[k], 8) << "iteration " << k;
  EXPECT_EQ(g.outputs.at(0)->name, "v_it2");
  EXPECT_EQ(g.output_names, (std::vector<std::string>{"v", "d_u"}));
  EXPECT_EQ(g.inputs.at(1)->name, "d_v");  // the cotangent of the live-out v
}

// A short loop pinned as a golden: carried b, loop variable in a read index
// and in a value, one live-out.
TEST(LoopGrad, GoldenTwoIterations) {
  const char* src = R"(
def steps(float(N) x, float(R, N) w) -> (y, z) {
  y(i) = x(i)
  for r in 0:2 {
    z(i) = tanh(y(i) * w(r, i))
    y(i) = z(i) + x(i) * float32(r)
  }
}
)";
  GradRequest req{{}, "", true};
  tenet::testing::expect_golden("ad/loop.grad.ir", grad_ir(src, "steps", req));
  GradcheckOptions opt;
  opt.request = req;
  opt.sizes = {{"N", 3}, {"R", 2}};
  expect_gradcheck(src, "steps", opt);
}

TEST(LoopGrad, NestedLoops) {
  const char* src = R"(
def nested(float(N) x, float(R, N) w) -> (loss) {
  y(i) = x(i)
  for a in 0:2 {
    for r in 0:3 {
      y(i) = tanh(y(i) * w(r, i) + float32(r) * 0.1)
    }
    y(i) += x(i) * float32(a + 1)
  }
  loss +=! y(i) * y(i)
}
)";
  GradcheckOptions opt;
  opt.sizes = {{"N", 4}, {"R", 3}};
  expect_gradcheck(src, "nested", opt);
}

// The checker rejects a loop whose trip count is not a constant, so AD never
// sees one (IR loops carry a constant trip count by construction).
TEST(LoopGrad, NonConstantTripCountIsRejectedBeforeAD) {
  const char* src =
      "def f(float(N) x) -> (y) {\n  y(i) = x(i)\n  for it in 0:N {\n"
      "    y(i) = y(i) * 2\n  }\n}\n";
  try {
    compile_fn(src, "f");
    FAIL() << "expected a CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("test.tn:3:15: error:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("constant"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tenet::ad::testing
