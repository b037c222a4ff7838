// Tensor Comprehensions' expression syntax (issue 15): the ternary, integer
// promotion, TC's builtin names. Each program runs in the interpreter against
// values computed here by hand (plain C++ loops, the NumPy formula), and
// compiled against the interpreter. Gradients: models/zoo/tc_*.tn in the zoo
// table.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "driver/driver.h"
#include "ir/interp.h"
#include "lang/check.h"
#include "support/diagnostics.h"
#include "support/error.h"
#include "support/tensor.h"

namespace tenet {
namespace {

struct Outputs {
  std::vector<Tensor> interpreted, compiled;
};

// Compiles `text`, runs function `fn` in the interpreter and compiled, and
// checks that both agree (float32, to 1e-5 of the largest value).
Outputs run_both(const std::string& text, const std::string& fn,
                 const std::vector<Tensor>& inputs) {
  ir::Module m = lang::compile_source(SourceFile("tc_expr.tn", text));
  const ir::Function* f = m.find(fn);
  EXPECT_NE(f, nullptr);
  Outputs r;
  if (!f) return r;
  r.interpreted = ir::interpret(*f, inputs);
  driver::optimise(m);
  r.compiled = driver::jit_compile(m, fn).run(inputs);
  EXPECT_EQ(r.compiled.size(), r.interpreted.size());
  for (size_t i = 0; i < r.compiled.size() && i < r.interpreted.size(); ++i) {
    EXPECT_EQ(r.compiled[i].shape(), r.interpreted[i].shape());
    double peak = 1e-30;
    for (int64_t k = 0; k < r.interpreted[i].numel(); ++k)
      peak = std::max(peak, std::fabs(r.interpreted[i].get(k)));
    for (int64_t k = 0; k < r.interpreted[i].numel(); ++k)
      EXPECT_NEAR(r.compiled[i].get(k), r.interpreted[i].get(k), 1e-5 * peak)
          << "output " << i << " entry " << k;
  }
  return r;
}

void expect_values(const Tensor& t, const std::vector<double>& want, double tol = 1e-6) {
  ASSERT_EQ(t.numel(), int64_t(want.size()));
  for (size_t k = 0; k < want.size(); ++k)
    EXPECT_NEAR(t.get(int64_t(k)), want[k], tol * std::max(1.0, std::fabs(want[k])))
        << "entry " << k;
}

TEST(TcTernary, UntakenBranchIsNotEvaluated) {
  // x(i - 1) at i = 0 and x(i + 1) at i = N - 1 would be out of bounds; the
  // conditions exclude them, in every backend.
  const int64_t n = 6;
  Tensor x = random_tensor(ElemType::F32, {n}, 1);
  Outputs r = run_both(R"(def shift(float(N) x) -> (left, diff, nested, sel) {
  left(i) = i > 0 ? x(i - 1) : 0 where i in 0:N
  diff(i) = i < N - 1 ? x(i + 1) - x(i) : x(i) > 0 ? 1.0 : -1.0
  nested(i) = i == 0 ? x(i) : i == 1 ? 2 * x(i) : x(i - 2)
  sel(i) = select(i > 0, x(i - 1), x(i))
})",
                       "shift", {x});
  ASSERT_EQ(r.interpreted.size(), 4u);
  std::vector<double> left, diff, nested, sel;
  for (int64_t i = 0; i < n; ++i) {
    left.push_back(i > 0 ? x.get(i - 1) : 0);
    diff.push_back(i < n - 1 ? x.get(i + 1) - x.get(i) : x.get(i) > 0 ? 1.0 : -1.0);
    nested.push_back(i == 0 ? x.get(i) : i == 1 ? 2 * x.get(i) : x.get(i - 2));
    sel.push_back(i > 0 ? x.get(i - 1) : x.get(i));
  }
  expect_values(r.interpreted[0], left);
  expect_values(r.interpreted[1], diff);
  expect_values(r.interpreted[2], nested);
  expect_values(r.interpreted[3], sel);
}

TEST(TcTernary, TakenOutOfBoundsReadIsReported) {
  // The condition admits i = N - 1, where x(i + 1) leaves x: the interpreter
  // reports the read of the taken branch.
  ir::Module m = lang::compile_source(SourceFile("t.tn", R"(def f(float(N) x) -> (y) {
  y(i) = i < N ? x(i + 1) : 0 where i in 0:N
})"));
  Tensor x = random_tensor(ElemType::F32, {4}, 2);
  try {
    ir::interpret(m.functions[0], {x});
    ADD_FAILURE() << "no error";
  } catch (const BindError& e) {
    EXPECT_NE(std::string(e.what()).find("out-of-bounds read x(i + 1)"), std::string::npos)
        << e.what();
  }
}

TEST(TcPromotion, IntegersBecomeTheFloatOperandsType) {
  const int64_t n = 5;
  Tensor x = random_tensor(ElemType::F32, {n}, 3);
  Tensor k(ElemType::I32, {n});
  for (int64_t i = 0; i < n; ++i) k.set(i, double(3 * i - 4));
  Tensor w = random_tensor(ElemType::F64, {n}, 4);
  Outputs r = run_both(R"(def promote(float(N) x, int32(N) k, double(N) w) -> (a, b, c, d, e) {
  a(i) = x(i) * i
  b(i) = x(i) / N + k(i)
  c(i) = w(i) * k(i) - i * 0.5
  d(i) = x(i) > k(i) ? i : x(i)
  e(i) = fmax(k(i), x(i))
})",
                       "promote", {x, k, w});
  ASSERT_EQ(r.interpreted.size(), 5u);
  EXPECT_EQ(r.interpreted[0].type(), ElemType::F32);
  EXPECT_EQ(r.interpreted[2].type(), ElemType::F64);
  std::vector<double> a, b, c, d, e;
  for (int64_t i = 0; i < n; ++i) {
    a.push_back(x.get(i) * double(i));
    b.push_back(x.get(i) / double(n) + k.get(i));
    c.push_back(w.get(i) * k.get(i) - double(i) * 0.5);
    d.push_back(x.get(i) > k.get(i) ? double(i) : x.get(i));
    e.push_back(std::max(k.get(i), x.get(i)));
  }
  expect_values(r.interpreted[0], a);
  expect_values(r.interpreted[1], b);
  expect_values(r.interpreted[2], c, 1e-12);
  expect_values(r.interpreted[3], d);
  expect_values(r.interpreted[4], e);
}

TEST(TcBuiltins, MatchTheCmathFormulas) {
  const int64_t n = 7;
  Tensor x = random_tensor(ElemType::F64, {n}, 5, -0.9, 0.9);
  Tensor k(ElemType::I32, {n});
  for (int64_t i = 0; i < n; ++i) k.set(i, double(5 * i - 17));
  Outputs r = run_both(R"(def m(double(N) x, int32(N) k) -> (a, b, c, d, e) {
  a(i) = max(x(i), 0) + min(x(i), k(i)) + rsqrt(x(i) * x(i) + 1) + fabs(x(i))
  b(i) = k(i) % 3 + i % 4 + 7 % 2
  c(i) = fma(x(i), 2, 1) + atan2(x(i), 1.5) + hypot(x(i), 2) + copysign(2, x(i))
      + nextafter(x(i), 0)
  d(i) = floor(4 * x(i)) + ceil(4 * x(i)) + round(4 * x(i)) + trunc(4 * x(i)) + rint(4 * x(i))
      + exp2(x(i)) + log2(x(i) + 2) + log10(x(i) + 2) + log1p(x(i)) + expm1(x(i))
  e(i) = sin(x(i)) + cos(x(i)) + tan(x(i)) + asin(x(i)) + acos(x(i)) + atan(x(i))
      + sinh(x(i)) + cosh(x(i)) + erf(x(i)) + erfc(x(i)) + cbrt(x(i))
})",
                       "m", {x, k});
  ASSERT_EQ(r.interpreted.size(), 5u);
  EXPECT_EQ(r.interpreted[1].type(), ElemType::I64);
  std::vector<double> a, b, c, d, e;
  for (int64_t i = 0; i < n; ++i) {
    const double v = x.get(i), kv = k.get(i), q = 4 * v;
    a.push_back(std::fmax(v, 0) + std::fmin(v, kv) + 1 / std::sqrt(v * v + 1) + std::fabs(v));
    // C's %: the sign of the dividend (-17 % 3 == -2).
    b.push_back(double(int64_t(kv) % 3 + i % 4 + 1));
    c.push_back(v * 2 + 1 + std::atan2(v, 1.5) + std::hypot(v, 2.0) + std::copysign(2.0, v) +
                std::nextafter(v, 0.0));
    d.push_back(std::floor(q) + std::ceil(q) + std::round(q) + std::trunc(q) + std::rint(q) +
                std::exp2(v) + std::log2(v + 2) + std::log10(v + 2) + std::log1p(v) +
                std::expm1(v));
    e.push_back(std::sin(v) + std::cos(v) + std::tan(v) + std::asin(v) + std::acos(v) +
                std::atan(v) + std::sinh(v) + std::cosh(v) + std::erf(v) + std::erfc(v) +
                std::cbrt(v));
  }
  expect_values(r.interpreted[0], a, 1e-12);
  expect_values(r.interpreted[1], b, 0);
  expect_values(r.interpreted[2], c, 1e-12);
  expect_values(r.interpreted[3], d, 1e-12);
  expect_values(r.interpreted[4], e, 1e-12);
}

TEST(TcBuiltins, RemainderByZeroIsReported) {
  ir::Module m = lang::compile_source(SourceFile("t.tn", R"(def f(int32(N) k) -> (y) {
  y(i) = 7 % k(i)
})"));
  Tensor k(ElemType::I32, {3});
  k.set(0, 2);
  try {
    ir::interpret(m.functions[0], {k});
    ADD_FAILURE() << "no error";
  } catch (const BindError& e) {
    EXPECT_EQ(std::string(e.what()),
              "integer remainder by zero in the statement defining 'y' at i = 1");
  }
}

}  // namespace
}  // namespace tenet
