// Small models built from the pieces above, gradchecked end to end: squash,
// an MLP with ReLU, layer norm, cross-entropy over integer labels, scaled
// dot-product attention and the LLTM cell.
#include <gtest/gtest.h>

#include "tests/ad/ad_test_util.h"

namespace tenet::ad::testing {
namespace {

GradcheckOptions vjp(ir::SizeBindings sizes) {
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = std::move(sizes);
  return opt;
}

TEST(ModelGrad, Squash) {
  const char* src = R"(
def squash(float(B, N, D) s) -> (v) {
  n2(b, n) +=! s(b, n, d) * s(b, n, d)
  v(b, n, d) = s(b, n, d) * sqrt(n2(b, n) + 1e-7) / (1 + n2(b, n))
}
)";
  expect_gradcheck(src, "squash", vjp({{"B", 2}, {"N", 3}, {"D", 4}}));
}

// Calls are inlined by the checker before AD sees the IR, so no per-function
// adjoint exists; the callee's statements keep their source text, and so do
// the backward statements derived from them.
TEST(ModelGrad, CallsAreInlined) {
  const char* src = R"(
def squash(float(B, N, D) s) -> (v) {
  n2(b, n) +=! s(b, n, d) * s(b, n, d)
  v(b, n, d) = s(b, n, d) * sqrt(n2(b, n) + 1e-7) / (1 + n2(b, n))
}
def caps(float(B, N, D) x) -> (loss) {
  v = squash(x)
  loss +=! v(b, n, d) * v(b, n, d)
}
)";
  GradcheckOptions opt;
  opt.sizes = {{"B", 2}, {"N", 2}, {"D", 3}};
  expect_gradcheck(src, "caps", opt);
  std::string ir = grad_ir(src, "caps");
  EXPECT_NE(ir.find("# backward: n2(b, n) +=! s(b, n, d) * s(b, n, d)"), std::string::npos) << ir;
}

TEST(ModelGrad, MlpWithRelu) {
  const char* src = R"(
def mlp(float(B, I) x, float(H, I) w1, float(H) b1, float(O, H) w2) -> (loss) {
  h(b, j) +=! x(b, i) * w1(j, i)
  a(b, j) = fmax(h(b, j) + b1(j), 0.0)
  y(b, o) +=! a(b, j) * w2(o, j)
  loss +=! y(b, o) * y(b, o)
}
)";
  GradcheckOptions opt;
  opt.sizes = {{"B", 2}, {"I", 3}, {"H", 4}, {"O", 2}};
  GradcheckReport r = expect_gradcheck(src, "mlp", opt);
  EXPECT_EQ(r.inputs.size(), 4u);
}

TEST(ModelGrad, LayerNorm) {
  const char* src = R"(
def layer_norm(float(N, D) x, float(D) gamma, float(D) beta) -> (y) {
  mean(n) +=! x(n, d) / float32(D)
  c(n, d) = x(n, d) - mean(n)
  var(n) +=! c(n, d) * c(n, d) / float32(D)
  y(n, d) = c(n, d) / sqrt(var(n) + 1e-5) * gamma(d) + beta(d)
}
)";
  expect_gradcheck(src, "layer_norm", vjp({{"N", 3}, {"D", 5}}));
}

TEST(ModelGrad, CrossEntropyOverIntegerLabels) {
  const char* src = R"(
def xent(float(N, K) z, int32(N) label) -> (loss) {
  m(n) max=! z(n, k)
  lse(n) +=! exp(z(n, k) - m(n))
  picked(n) +=! select(int32(k) == label(n), z(n, k), 0.0)
  loss +=! log(lse(n)) + m(n) - picked(n)
}
)";
  GradcheckOptions opt;
  Tensor label(ElemType::I32, {3});
  label.set(0, 2);
  label.set(1, 0);
  label.set(2, 3);
  opt.inputs = {random_tensor(ElemType::F32, {3, 4}, 7), label};
  GradcheckReport r = expect_gradcheck(src, "xent", opt);
  ASSERT_EQ(r.inputs.size(), 1u);  // labels are integers: no gradient
}

TEST(ModelGrad, ScaledDotProductAttention) {
  const char* src = R"(
def attention(float(T, D) q, float(S, D) k, float(S, E) v) -> (out) {
  score(t, s) +=! q(t, d) * k(s, d) / sqrt(float32(D))
  m(t) max=! score(t, s)
  e(t, s) = exp(score(t, s) - m(t))
  z(t) +=! e(t, s)
  out(t, c) +=! e(t, s) / z(t) * v(s, c)
}
)";
  expect_gradcheck(src, "attention", vjp({{"T", 2}, {"S", 3}, {"D", 4}, {"E", 2}}));
}

// The LLTM cell of PyTorch's C++ extension tutorial: one matmul for the
// three gates over [h, x] (a channel split of the weight), sigmoid, sigmoid,
// ELU, new cell and hidden state.
TEST(ModelGrad, Lltm) {
  const char* src = R"(
def lltm(float(B, I) x, float(B, S) h, float(B, S) cell, float(G, J) w, float(G) bias) -> (new_h, new_c) {
  gates(b, g) +=! select(j < S, h?(b, j), x?(b, j - S)) * w(g, j) where b in 0:B
  gb(b, g) = gates(b, g) + bias(g)
  ig(b, s) = sigmoid(gb(b, s)) where s in 0:S
  og(b, s) = sigmoid(gb(b, S + s)) where s in 0:S
  cg(b, s) = select(gb(b, 2*S + s) > 0, gb(b, 2*S + s), exp(gb(b, 2*S + s)) - 1) where s in 0:S
  new_c(b, s) = cell(b, s) + cg(b, s) * ig(b, s)
  new_h(b, s) = tanh(new_c(b, s)) * og(b, s)
}
)";
  expect_gradcheck(src, "lltm", vjp({{"B", 2}, {"I", 2}, {"S", 2}, {"G", 6}, {"J", 4}}));
  // The gates' weight gradient is one contraction over the batch.
  std::string ir = grad_ir(src, "lltm", {{}, "", true});
  EXPECT_NE(ir.find("%d_w[g, j]: float32[G, J] = sum [b in 0:B]"), std::string::npos) << ir;
}

}  // namespace
}  // namespace tenet::ad::testing
