// The update operators `+=`, `max=`, `min=`, `*=` (onto an existing tensor,
// starting from its values) and the product reduction `*=!` (starting from
// 1): tokens, lowering, values through the interpreter against plain C++,
// and their errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ir/interp.h"
#include "lang/lexer.h"
#include "tests/lang/check_util.h"

namespace tenet::lang {
namespace {

using tenet::testing::check_error;
using tenet::testing::check_ok;
using tenet::testing::check_run;

TEST(Accumulate, Tokens) {
  SourceFile file("t.tn", "*=! *= max= min= max=! max == * =");
  std::vector<TokenKind> kinds;
  for (const Token& t : lex(file)) kinds.push_back(t.kind);
  using K = TokenKind;
  EXPECT_EQ(kinds,
            (std::vector<K>{K::ProdReduce, K::ProdAccumulate, K::MaxAccumulate, K::MinAccumulate,
                            K::MaxReduce, K::Name, K::EqEq, K::Star, K::Assign, K::End}));
}

TEST(Accumulate, UpdatesStartFromTheExistingValues) {
  Tensor x = random_tensor(ElemType::F32, {3, 4}, 1);
  Tensor a = random_tensor(ElemType::F32, {3}, 2);
  auto out = check_run(R"(def f(float(N, K) x, float(N) a) -> (mx, mn, pr, el, p) {
  mx(i) = a(i)
  mx(i) max= x(i, k)
  mn(i) = a(i)
  mn(i) min= x(i, k)
  pr(i) = a(i)
  pr(i) *= x(i, k)
  el(i, k) = x(i, k)
  el(i, k) *= a(i)
  p(i) *=! x(i, k) + 1
})",
                       {x, a});
  ASSERT_EQ(out.size(), 5u);
  for (int64_t i = 0; i < 3; ++i) {
    double mx = a.get(i), mn = a.get(i), pr = a.get(i), p = 1;
    for (int64_t k = 0; k < 4; ++k) {
      double v = x.get(i * 4 + k);
      mx = std::max(mx, v);
      mn = std::min(mn, v);
      pr *= v;
      p *= v + 1;
      EXPECT_NEAR(out[3].get(i * 4 + k), v * a.get(i), 1e-9);
    }
    EXPECT_NEAR(out[0].get(i), mx, 1e-9);
    EXPECT_NEAR(out[1].get(i), mn, 1e-9);
    EXPECT_NEAR(out[2].get(i), pr, 1e-9);
    EXPECT_NEAR(out[4].get(i), p, 1e-9);
  }
}

TEST(Accumulate, IntegerProduct) {
  Tensor x(ElemType::I32, {2, 3});
  for (int64_t i = 0; i < 6; ++i) x.set(i, double(i + 1));
  auto out = check_run("def f(int32(N, K) x) -> (p) {\n  p(i) *=! x(i, k)\n}", {x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].get(0), 6);
  EXPECT_EQ(out[0].get(1), 120);
}

TEST(Accumulate, LowersToAReductionWithInit) {
  ir::Module m = check_ok(
      "def f(float(N, K) x) -> (y) {\n  y(i) = 1 where i in 0:N\n"
      "  y(i) max= x(i, k)\n}");
  ASSERT_EQ(m.functions.size(), 1u);
  const ir::Compute& c = m.functions[0].body.at(1).compute;
  EXPECT_EQ(c.op, ir::ReduceOp::Max);
  EXPECT_EQ(c.init, m.functions[0].body.at(0).compute.result);
  ASSERT_EQ(c.reduce.size(), 1u);
}

TEST(Accumulate, NeedAnExistingTensor) {
  for (const char* op : {"max=", "min=", "*="}) {
    std::string text =
        check_error(std::string("def f(float(N) x) -> (y) {\n  y(i) ") + op + " x(i)\n}");
    std::string want = std::string("'") + op + "' accumulates onto an existing tensor, but 'y' " +
                       "is not defined; use '" + std::string(op).substr(0, strlen(op) - 1) +
                       "=!' to define it";
    EXPECT_NE(text.find(want), std::string::npos) << text;
  }
  EXPECT_NE(check_error("def f(float(N) x) -> (y) {\n  y(i) = x(i)\n  y(i, j) *= x(i)\n}")
                .find("rank mismatch: 'y' has rank 1 but is indexed with 2 indices"),
            std::string::npos);
}

// TC accepts a reduction with no reduced index: the identity combined with
// the value once.
TEST(Accumulate, ReductionsWithNoReducedIndex) {
  Tensor x = random_tensor(ElemType::F32, {2, 3}, 5);
  auto out = check_run(R"(def f(float(N, K) x) -> (s, p, m, c) {
  s(i, k) +=! x(i, k)
  p(i, k) *=! x(i, k) * 2
  m(i, k) max=! x(i, k) - 1
  c(j) +=! x(n, k) where j in 0:1
})",
                       {x});
  ASSERT_EQ(out.size(), 4u);
  double total = 0;
  for (int64_t e = 0; e < 6; ++e) {
    EXPECT_EQ(out[0].get(e), x.get(e));
    EXPECT_EQ(out[1].get(e), x.get(e) * 2);
    EXPECT_EQ(out[2].get(e), x.get(e) - 1);
    total += x.get(e);
  }
  ASSERT_EQ(out[3].shape(), (std::vector<int64_t>{1}));
  EXPECT_NEAR(out[3].get(0), total, 1e-9);
  ir::Module m = check_ok("def f(float(N) x) -> (y) {\n  y(i) +=! x(i)\n}");
  ASSERT_EQ(m.functions.size(), 1u);
  EXPECT_EQ(m.functions[0].body.at(0).compute.op, ir::ReduceOp::Sum);
  EXPECT_TRUE(m.functions[0].body.at(0).compute.reduce.empty());
}

}  // namespace
}  // namespace tenet::lang

namespace tenet::lang {
namespace {

// TC's accumulation into an output the caller supplies: a declared output
// whose first statement updates it is an input of the IR too (its initial
// value), and the output of the same name updates it.
TEST(AccumulateIntoCallerOutput, TheInitialValueIsAnInput) {
  Tensor x = random_tensor(ElemType::F32, {3, 4}, 1);
  Tensor y = random_tensor(ElemType::F32, {3}, 2);
  const char* text =
      "def f(float(N, K) x) -> (float(N) y, z) {\n  y(i) += x(i, k)\n"
      "  y(i) = y(i) * 2\n  z(i) = y(i)\n}";
  ir::Module m = check_ok(text);
  const ir::Function& fn = m.functions.at(0);
  ASSERT_EQ(fn.inputs.size(), 2u);
  EXPECT_EQ(fn.inputs[1]->name, "y");
  EXPECT_EQ(fn.output_names[0], "y");
  EXPECT_EQ(fn.updated_input(0), 1);
  EXPECT_EQ(fn.updated_input(1), -1);
  auto out = check_run(text, {x, y});
  for (int64_t i = 0; i < 3; ++i) {
    double sum = y.get(i);
    for (int64_t k = 0; k < 4; ++k) sum += x.get(i * 4 + k);
    EXPECT_NEAR(out[0].get(i), 2 * sum, 1e-5);
    EXPECT_NEAR(out[1].get(i), 2 * sum, 1e-5);
  }
}

TEST(AccumulateIntoCallerOutput, OnlyDeclaredOutputsUpdatedFirst) {
  // Undeclared: the shape is unknown, so the error says how to declare it.
  std::string text = check_error("def f(float(N) x) -> (y) {\n  y(i) += x(i)\n}");
  EXPECT_NE(text.find("'+=' accumulates onto an existing tensor, but 'y' is not defined"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("note: or, to accumulate into the caller's 'y', declare this output with "
                      "its type and shape (e.g. float(N) y)"),
            std::string::npos)
      << text;
  // A read before the update is a read of an undefined tensor, as for temporaries.
  text = check_error("def f(float(N) x) -> (float(N) y, z) {\n  z(i) = y(i)\n  y(i) += x(i)\n}");
  EXPECT_NE(text.find("unknown name 'y'"), std::string::npos) << text;
  // A declared output defined first is an ordinary output.
  ir::Module m = check_ok("def f(float(N) x) -> (float(N) y) {\n  y(i) = x(i)\n  y(i) += 1\n}");
  EXPECT_EQ(m.functions.at(0).inputs.size(), 1u);
}

TEST(AccumulateIntoCallerOutput, CallsUpdateTheCallersTensor) {
  Tensor x = random_tensor(ElemType::F32, {3}, 1);
  auto out = check_run(R"(def acc(float(N) x) -> (float(N) y) {
  y(i) += x(i)
}
def main(float(N) x) -> (z) {
  z(i) = x(i) * 10
  z = acc(x)
  z = acc(x)
})",
                       {x});
  for (int64_t i = 0; i < 3; ++i) EXPECT_NEAR(out[0].get(i), 12 * x.get(i), 1e-5);
  std::string text = check_error(
      "def acc(float(N) x) -> (float(N) y) {\n  y(i) += x(i)\n}\n"
      "def main(float(N) x) -> (z) {\n  z = acc(x)\n}");
  EXPECT_NE(text.find("test.tn:5:3: error: 'acc' updates its output 'y', which starts from the "
                      "caller's values, so 'z' must be defined before the call"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace tenet::lang
