// Affine reads: every adjoint is a gather over the read tensor's own domain.
// Convolution input gradients (stride 1 and 2) are pinned as goldens and
// checked to be plain gathers; repeated indices and non-invertible index maps
// are checked numerically and structurally.
#include <gtest/gtest.h>

#include "ir/interp.h"
#include "ir/printer.h"
#include "tests/ad/ad_test_util.h"
#include "tests/support/golden.h"

namespace tenet::ad::testing {
namespace {

const ir::Stmt& defining(const ir::Function& g, const std::string& name) {
  for (const ir::Stmt& s : g.body)
    if (s.kind == ir::StmtKind::Compute && s.compute.result->name == name) return s;
  throw std::runtime_error("no statement defines " + name);
}

std::vector<std::string> reduce_indices(const ir::Stmt& s) {
  std::vector<std::string> out;
  for (const ir::Dim& d : s.compute.reduce) out.push_back(d.index);
  return out;
}

// What "no scatter" means in this IR: every backward statement is a Compute
// that writes each element of its own result once (out ranges = its shape);
// none needed an equality mask; and d_x is a gather whose reduce indices are
// exactly `expected_reduce`.
void expect_plain_gather(const ir::Function& g, const std::vector<std::string>& expected_reduce) {
  for (const ir::Stmt& s : g.body) {
    ASSERT_EQ(s.kind, ir::StmtKind::Compute);
    for (size_t m = 0; m < s.compute.out.size(); ++m)
      EXPECT_EQ(s.compute.out[m].hi, s.compute.result->shape[m]);
    const std::string& ad = s.annotations.ad_detail;
    EXPECT_EQ(ad.find("scatter"), std::string::npos) << ad;
    EXPECT_EQ(ad.find("masked"), std::string::npos) << ad;
  }
  const ir::Stmt& dx = defining(g, "d_x");
  EXPECT_EQ(dx.annotations.ad, ir::AdOrigin::Backward);
  EXPECT_EQ(dx.annotations.ad_detail.rfind("gather for x", 0), 0u) << dx.annotations.ad_detail;
  EXPECT_EQ(reduce_indices(dx), expected_reduce);
}

const char* kConv1 = R"(
def conv(float(B, C, H, W) x, float(O, C, 3, 3) w, float(O) bias) -> (y) {
  y(b, o, i, j) +=! x(b, c, i + ki, j + kj) * w(o, c, ki, kj)
  y(b, o, i, j) += bias(o)
}
)";

const char* kConv2 = R"(
def conv_stride2(float(B, C, H, W) x, float(O, C, 3, 3) w, float(O) bias) -> (y) {
  y(b, o, i, j) +=! x(b, c, 2*i + ki, 2*j + kj) * w(o, c, ki, kj)
  y(b, o, i, j) += bias(o)
}
)";

TEST(AffineGrad, ConvStride1InputGradientIsAGather) {
  GradRequest req{{}, "", true};
  ir::Function g = differentiate(compile_fn(kConv1, "conv"), req);
  tenet::testing::expect_golden("ad/conv_stride1.grad.ir", ir::print(g));
  // dx(b, c, h, w) sums over the kernel taps, reading dy at h - ki (guarded).
  expect_plain_gather(g, {"o", "ki", "kj"});
  EXPECT_TRUE(defining(g, "d_x").compute.body->args[0]->guarded);
}

TEST(AffineGrad, ConvStride2InputGradientIsAGather) {
  GradRequest req{{}, "", true};
  ir::Function g = differentiate(compile_fn(kConv2, "conv_stride2"), req);
  tenet::testing::expect_golden("ad/conv_stride2.grad.ir", ir::print(g));
  // Only the kernel tap has coefficient 1 in 2*i + ki: dx sums over the output
  // positions i, j and reads the kernel at h - 2*i, guarded to [0, 3).
  expect_plain_gather(g, {"o", "i", "j"});
  EXPECT_TRUE(defining(g, "d_x").compute.body->args[1]->guarded);
}

TEST(AffineGrad, ConvGradcheck) {
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = {{"B", 2}, {"C", 2}, {"H", 4}, {"W", 5}, {"O", 2}};
  expect_gradcheck(kConv1, "conv", opt);
  opt.sizes = {{"B", 1}, {"C", 2}, {"H", 7}, {"W", 6}, {"O", 2}};  // output 3 x 2
  expect_gradcheck(kConv2, "conv_stride2", opt);
}

TEST(AffineGrad, PaddedConvThroughGuardedReads) {
  const char* src = R"(
def conv_pad(float(B, C, H, W) x, float(O, C, 3, 3) w) -> (y) {
  y(b, o, i, j) +=! x?(b, c, i + ki - 1, j + kj - 1) * w(o, c, ki, kj) where b in 0:B, i in 0:H, j in 0:W
}
)";
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = {{"B", 1}, {"C", 2}, {"H", 4}, {"W", 3}, {"O", 2}};
  expect_gradcheck(src, "conv_pad", opt);
  expect_plain_gather(differentiate(compile_fn(src, "conv_pad"), opt.request), {"o", "ki", "kj"});
}

const char* kPool = R"(
def pool(float(B, H, W) x) -> (m) {
  m(b, i, j) max=! x(b, 2*i + ki, 2*j + kj) where ki in 0:2, kj in 0:2
}
)";

TEST(AffineGrad, MaxPoolRoutesToOneElementPerWindow) {
  ir::Function g = differentiate(compile_fn(kPool, "pool"), {{}, "", true});
  tenet::testing::expect_golden("ad/maxpool.grad.ir", ir::print(g));
  Tensor x(ElemType::F32, {1, 4, 4});
  // Window (0, 0) is all ties; windows (0, 1) and (1, 1) tie in a column;
  // window (1, 0) has one maximum.
  const double v[16] = {1, 1, 0, 5,  //
                        1, 1, 2, 5,  //
                        3, 9, 7, 4,  //
                        8, 0, 7, 4};
  for (int k = 0; k < 16; ++k) x.set(k, v[k]);
  Tensor dm(ElemType::F32, {1, 2, 2});
  for (int k = 0; k < 4; ++k) dm.set(k, k + 1);
  std::vector<Tensor> out = ir::interpret(g, {x, dm});
  const double expected[16] = {1, 0, 0, 2,  //
                               0, 0, 0, 0,  //
                               0, 3, 4, 0,  //
                               0, 0, 0, 0};
  for (int k = 0; k < 16; ++k) EXPECT_EQ(out[1].get(k), expected[k]) << "entry " << k;
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = {{"B", 2}, {"H", 4}, {"W", 6}};
  expect_gradcheck(kPool, "pool", opt);
}

// x(i, i): only the diagonal of dx is touched, everything else is exactly 0.
TEST(AffineGrad, RepeatedIndexTouchesOnlyTheDiagonal) {
  const char* src = R"(
def diag(float(N, N) x, float(M) z) -> (y, t) {
  y(i, j) = x(i, i) * z(j)
  t +=! x(k, k)
}
)";
  ir::Function g = differentiate(compile_fn(src, "diag"), {{"x"}, "", true});
  tenet::testing::expect_golden("ad/repeated_index.grad.ir", ir::print(g));
  Tensor x = random_tensor(ElemType::F32, {3, 3}, 5), z(ElemType::F32, {2});
  z.set(0, 2);
  z.set(1, 3);
  Tensor dy(ElemType::F32, {3, 2}), dt(ElemType::F32, {});
  for (int k = 0; k < 6; ++k) dy.set(k, k + 1);
  dt.set(0, 100);
  std::vector<Tensor> out = ir::interpret(g, {x, z, dy, dt});
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      EXPECT_EQ(out[2].get(3 * i + j), i == j ? 2 * dy.get(2 * i) + 3 * dy.get(2 * i + 1) + 100 : 0)
          << i << ", " << j;
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = {{"N", 3}, {"M", 2}};
  expect_gradcheck(src, "diag", opt);
  const char* three = "def f(float(N, N, N) x) -> (y) {\n  y(i, j) = x(i, j, i) * x(j, j, i)\n}\n";
  opt.sizes = {{"N", 3}};
  expect_gradcheck(three, "f", opt);
}

// Index maps with no unit-coefficient index, and a map with colliding
// contributions (x(i + j)): each still a Compute over dx's own domain.
TEST(AffineGrad, NonInvertibleMaps) {
  const char* src = R"(
def sub2(float(N) x) -> (y) {
  y(i) = x(2 * i) * x(2 * i + 1) where i in 0:N/2
}
def corner(float(N, N) x) -> (y) {
  y(i) = x(0, i) * x(N - 1 - i, 1)
}
def shift(float(K) x, float(N, M) w) -> (y) {
  y(i, j) = x(i + j) * w(i, j)
}
)";
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = {{"N", 6}};
  expect_gradcheck(src, "sub2", opt);
  opt.sizes = {{"N", 4}};
  expect_gradcheck(src, "corner", opt);
  opt.sizes = {{"K", 6}, {"N", 3}, {"M", 4}};
  expect_gradcheck(src, "shift", opt);

  ir::Function sub2 = differentiate(compile_fn(src, "sub2"), opt.request);
  EXPECT_EQ(defining(sub2, "d_x").annotations.ad_detail, "masked gather for x(2*i + 1)");
  ir::Function shift = differentiate(compile_fn(src, "shift"), opt.request);
  // dx(k) = sum over j of dy?(k - j, j) * w?(k - j, j): a gather, no mask.
  EXPECT_EQ(defining(shift, "d_x").annotations.ad_detail, "gather for x(i + j)");
  EXPECT_EQ(reduce_indices(defining(shift, "d_x")), std::vector<std::string>{"j"});
}

// A reduce range narrower than the tensor: only x(1) .. x(N - 2) get a
// gradient, through an explicit range guard on the solved index.
TEST(AffineGrad, PartialRangeNeedsAGuard) {
  const char* src = R"(
def inner(float(N) x) -> (t) {
  t +=! x(k) * x(k + 1) where k in 1:N - 2
}
)";
  ir::Function g = differentiate(compile_fn(src, "inner"), {});
  Tensor x(ElemType::F32, {5});
  for (int k = 0; k < 5; ++k) x.set(k, k + 1);
  std::vector<Tensor> out = ir::interpret(g, {x});
  // d/dx of x1 x2 + x2 x3 (0-based), with x = 1..5.
  const double expected[5] = {0, 3, 2 + 4, 3, 0};
  for (int k = 0; k < 5; ++k) EXPECT_EQ(out.at(1).get(k), expected[k]) << k;
  GradcheckOptions opt;
  opt.sizes = {{"N", 6}};
  expect_gradcheck(src, "inner", opt);
}

// Reads at a solved index return 0 out of range; 0 * (1 / 0) there would be
// NaN, so a quotient keeps an explicit guard instead of relying on the
// guarded read dy?(h - k).
TEST(AffineGrad, GuardedReadsNeverMakeNaN) {
  const char* src = R"(
def f(float(N) x, float(M) z) -> (y, y2) {
  y(i) +=! x(i + k) / z(i) where k in 0:N - M + 1
  y2(i) +=! x(i + k) * (1 / z(i)) where k in 0:N - M + 1
}
)";
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = {{"N", 5}, {"M", 3}};
  Tensor x = random_tensor(ElemType::F32, {5}, 1), z = random_tensor(ElemType::F32, {3}, 2, 1, 2);
  opt.inputs = {x, z};
  expect_gradcheck(src, "f", opt);
}

// A channel split (capsules): c(b, 4*t + d) read as u(b, t, d).
TEST(AffineGrad, ChannelSplit) {
  const char* src = R"(
def caps(float(B, C) c) -> (u) {
  u(b, t, d) = c(b, 4*t + d) * c(b, 4*t + d) where t in 0:C/4, d in 0:4
}
)";
  GradcheckOptions opt;
  opt.request.vjp = true;
  opt.sizes = {{"B", 2}, {"C", 12}};
  expect_gradcheck(src, "caps", opt);
}

}  // namespace
}  // namespace tenet::ad::testing
