// Redefinition of a tensor (TC's `O = O + B`): each definition is a new SSA
// version; reads see the latest version before them, an output is its last
// version, and a loop body's versions chain through the carried tensor.
// Values are computed by the interpreter and compared with plain C++.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ir/interp.h"
#include "tests/lang/check_util.h"

namespace tenet::lang {
namespace {

using tenet::testing::check_error;
using tenet::testing::check_ok;
using tenet::testing::check_run;

TEST(Redefine, LaterReadsSeeTheLatestVersionAndOutputsTheLast) {
  Tensor x = random_tensor(ElemType::F32, {3, 4}, 1);
  Tensor b = random_tensor(ElemType::F32, {4}, 2);
  auto out = check_run(R"(def f(float(N, D) x, float(D) b) -> (y, mean, first) {
  y(n, d) = x(n, d)
  first(n, d) = y(n, d) * 2
  y(n, d) = y(n, d) + b(d)
  y(n, d) = fmax(y(n, d), 0)
  mean(n) +=! y(n, d)
  mean(n) = mean(n) / float32(D)
})",
                       {x, b});
  ASSERT_EQ(out.size(), 3u);
  for (int64_t n = 0; n < 3; ++n) {
    double mean = 0;
    for (int64_t d = 0; d < 4; ++d) {
      double y = std::max(x.get(n * 4 + d) + b.get(d), 0.0);
      EXPECT_NEAR(out[0].get(n * 4 + d), y, 1e-6);
      EXPECT_NEAR(out[2].get(n * 4 + d), 2 * x.get(n * 4 + d), 1e-6);
      mean += y;
    }
    EXPECT_NEAR(out[1].get(n), mean / 4, 1e-6);
  }
}

TEST(Redefine, VersionsAreRenamedInTheIrAndOutputsKeepTheSourceName) {
  ir::Module m = check_ok(R"(def f(float(N) x) -> (y) {
  y(i) = x(i)
  y(i) = y(i) * 2
  y(i) = y(i) + 1
})");
  ASSERT_EQ(m.functions.size(), 1u);
  const ir::Function& f = m.functions[0];
  ASSERT_EQ(f.body.size(), 3u);
  EXPECT_EQ(f.body[0].compute.result->name, "y");
  EXPECT_EQ(f.body[1].compute.result->name, "y.1");
  EXPECT_EQ(f.body[2].compute.result->name, "y.2");
  EXPECT_EQ(f.outputs[0]->name, "y.2");
  EXPECT_EQ(f.output_names[0], "y");
}

TEST(Redefine, InALoopBodyEachVersionChainsAndTheLastIsCarried) {
  Tensor x = random_tensor(ElemType::F32, {5}, 3);
  auto out = check_run(R"(def f(float(N) x) -> (y, t) {
  y(i) = x(i)
  for it in 0:3 {
    y(i) = y(i) * 0.5
    t(i) = y(i) + 1
    t(i) = t(i) * t(i)
    y(i) = y(i) + t(i)
  }
  t(i) = t(i) - 1
})",
                       {x});
  ASSERT_EQ(out.size(), 2u);
  for (int64_t i = 0; i < 5; ++i) {
    double y = x.get(i), t = 0;
    for (int it = 0; it < 3; ++it) {
      y = y * 0.5;
      t = (y + 1) * (y + 1);
      y = y + t;
    }
    EXPECT_NEAR(out[0].get(i), y, 1e-9);
    EXPECT_NEAR(out[1].get(i), t - 1, 1e-9);
  }
}

TEST(Redefine, AReductionMayRedefineAndReadThePreviousVersion) {
  Tensor x = random_tensor(ElemType::F32, {3, 4}, 4);
  auto out = check_run(R"(def f(float(N, M) x) -> (s) {
  s(i) +=! x(i, j)
  s(i) max=! x(i, j) + s(i)
})",
                       {x});
  ASSERT_EQ(out.size(), 1u);
  for (int64_t i = 0; i < 3; ++i) {
    double s = 0, m = -1e300;
    for (int64_t j = 0; j < 4; ++j) s += x.get(i * 4 + j);
    for (int64_t j = 0; j < 4; ++j) m = std::max(m, x.get(i * 4 + j) + s);
    EXPECT_NEAR(out[0].get(i), m, 1e-9);
  }
}

TEST(Redefine, KeepsRankShapeAndType) {
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) = x(i)\n  y(i, j) = x(i) where j in 0:2\n}",
               "rank mismatch: 'y' has rank 1 but is indexed with 2 indices");
  EXPECT_ERROR("def f(float(N) x, float(M) w) -> (y) {\n  y(i) = x(i)\n  y(i) = w(i)\n}",
               "size mismatch for index 'i': dimension 0 of 'y' has size N but dimension 0 of "
               "'w' has size M");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) = x(i)\n  y(i) = float64(x(i))\n}",
               "type mismatch: 'y' is float32 but the right side is float64");
  // Inputs stay read-only.
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  x(i) = x(i) * 2\n  y(i) = x(i)\n}",
               "cannot assign to input 'x'");
}

// TC rejects a temporary read before it is written, and a cycle between
// statements; in program order both are a read of a name not yet defined.
TEST(Redefine, ReadBeforeWriteAndCyclesAreUnknownNames) {
  std::string text =
      check_error("def f(float(N) x) -> (y) {\n  y(i) = t(i) + x(i)\n  t(i) = y(i) * 2\n}");
  EXPECT_NE(text.find("test.tn:2:10: error: unknown name 't'"), std::string::npos) << text;
  EXPECT_NE(text.find("^"), std::string::npos) << text;
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  t(i) = t(i) + x(i)\n  y(i) = t(i)\n}",
               "unknown name 't'");
}

}  // namespace
}  // namespace tenet::lang
