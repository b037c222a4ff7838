// Lowered programs computed by the interpreter and compared with plain C++
// loops: the meaning of ranges, strides, loop-carried tensors, loop variables,
// accumulation, integer promotion and inlining, not just the IR's shape.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ir/interp.h"
#include "lang/check.h"
#include "support/tensor.h"
#include "tests/lang/check_util.h"

namespace tenet::lang {
namespace {

std::vector<Tensor> run(const std::string& text, const std::string& fn,
                        const std::vector<Tensor>& inputs) {
  ir::Module m = tenet::testing::check_ok(text);
  const ir::Function* f = m.find(fn);
  if (!f) {
    ADD_FAILURE() << "no function " << fn;
    return {};
  }
  return ir::interpret(*f, inputs, {}, {ElemType::F64});
}

TEST(CheckNumeric, StrideTwoConvolution) {
  Tensor x = random_tensor(ElemType::F32, {2, 3, 11, 11}, 1);
  Tensor w = random_tensor(ElemType::F32, {4, 3, 3, 3}, 2);
  auto out = run(R"(def conv(float(B, C, H, W) x, float(O, C, 3, 3) w) -> (y) {
  y(b, o, i, j) +=! x(b, c, 2*i + ki, 2*j + kj) * w(o, c, ki, kj)
})",
                 "conv", {x, w});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{2, 4, 5, 5}));
  auto X = [&](int64_t b, int64_t c, int64_t i, int64_t j) {
    return x.get(((b * 3 + c) * 11 + i) * 11 + j);
  };
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t o = 0; o < 4; ++o)
      for (int64_t i = 0; i < 5; ++i)
        for (int64_t j = 0; j < 5; ++j) {
          double want = 0;
          for (int64_t c = 0; c < 3; ++c)
            for (int64_t ki = 0; ki < 3; ++ki)
              for (int64_t kj = 0; kj < 3; ++kj)
                want += X(b, c, 2 * i + ki, 2 * j + kj) * w.get(((o * 3 + c) * 3 + ki) * 3 + kj);
          EXPECT_NEAR(out[0].get(((b * 4 + o) * 5 + i) * 5 + j), want, 1e-9);
        }
}

TEST(CheckNumeric, LoopCarriedAndLiveOutWithOffsetLoopVariable) {
  // y is carried, t is a live-out; `it` runs over 2, 3, 4.
  Tensor x = random_tensor(ElemType::F32, {5}, 3);
  auto out = run(R"(def f(float(N) x) -> (y, t) {
  y(i) = x(i)
  for it in 2:5 {
    t(i) = y(i) * float32(it)
    y(i) = t(i) + x(N - 1 - i)
  }
})",
                 "f", {x});
  ASSERT_EQ(out.size(), 2u);
  for (int64_t i = 0; i < 5; ++i) {
    double y = x.get(i), t = 0;
    for (int it = 2; it < 5; ++it) {
      t = y * it;
      y = t + x.get(4 - i);
    }
    EXPECT_NEAR(out[0].get(i), y, 1e-9);
    EXPECT_NEAR(out[1].get(i), t, 1e-9);
  }
}

TEST(CheckNumeric, AccumulateGuardsAndWhere) {
  Tensor x = random_tensor(ElemType::F32, {4, 6}, 4);
  auto out = run(R"(def f(float(N, M) x) -> (s, d, p) {
  s(i) = 10 where i in 0:N
  s(i) += x(i, j)
  d(i, j) = x(i, j + 1) - x(i, j) where j in 0:M - 1
  p(i, j) = x?(i, j - 1) + x?(i, j + 1) where i in 0:N, j in 0:M
})",
                 "f", {x});
  ASSERT_EQ(out.size(), 3u);
  auto X = [&](int64_t i, int64_t j) { return (j < 0 || j >= 6) ? 0.0 : x.get(i * 6 + j); };
  ASSERT_EQ(out[1].shape(), (std::vector<int64_t>{4, 5}));
  for (int64_t i = 0; i < 4; ++i) {
    double s = 10;
    for (int64_t j = 0; j < 6; ++j) s += X(i, j);
    EXPECT_NEAR(out[0].get(i), s, 1e-9);
    for (int64_t j = 0; j < 5; ++j) EXPECT_NEAR(out[1].get(i * 5 + j), X(i, j + 1) - X(i, j), 1e-9);
    for (int64_t j = 0; j < 6; ++j)
      EXPECT_NEAR(out[2].get(i * 6 + j), X(i, j - 1) + X(i, j + 1), 1e-9);
  }
}

TEST(CheckNumeric, LabelsComparedWithIndices) {
  Tensor label(ElemType::I32, {3});
  label.set(0, 2);
  label.set(1, 0);
  label.set(2, 4);
  auto out = run(R"(def onehot(int32(B) label) -> (t) {
  t(b, k) = select(label(b) == k, 1, 0) where k in 0:5
})",
                 "onehot", {label});
  ASSERT_EQ(out.size(), 1u);
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t k = 0; k < 5; ++k)
      EXPECT_EQ(out[0].get(b * 5 + k), label.get(b) == double(k) ? 1.0 : 0.0);
}

TEST(CheckNumeric, InlinedCallsMatchTheCallee) {
  const char* text = R"(def softmax(float(N, K) z) -> (p) {
  m(n) max=! z(n, k)
  e(n, k) = exp(z(n, k) - m(n))
  total(n) +=! e(n, k)
  p(n, k) = e(n, k) / total(n)
}
def twice(float(N, K) z) -> (q) {
  p = softmax(z)
  q = softmax(p)
})";
  Tensor z = random_tensor(ElemType::F32, {3, 4}, 5, -3, 3);
  auto once = run(text, "softmax", {z});
  auto direct = run(text, "softmax", {once.at(0).cast(ElemType::F32)});
  auto inlined = run(text, "twice", {z});
  ASSERT_EQ(inlined.size(), 1u);
  EXPECT_LT(compare(inlined[0], direct.at(0)).max_abs, 1e-6);  // p went through float32
  for (int64_t n = 0; n < 3; ++n) {
    double sum = 0;
    for (int64_t k = 0; k < 4; ++k) sum += inlined[0].get(n * 4 + k);
    EXPECT_NEAR(sum, 1.0, 1e-9);
  }
}

}  // namespace
}  // namespace tenet::lang
