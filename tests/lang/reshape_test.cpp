// Reshape statements in the checker (docs/language.md, "Reshape"): the
// misuses, each message pinned, and the values the interpreter computes
// (elements in row-major order, as torch.reshape of a contiguous tensor).
#include <gtest/gtest.h>

#include <string>

#include "ir/printer.h"
#include "tests/lang/check_util.h"
#include "tests/lang/unparse_roundtrip.h"

namespace tenet::lang {
namespace {

using tenet::testing::check_error;
using tenet::testing::check_ok;
using tenet::testing::check_print;
using tenet::testing::check_run;

std::string body(const std::string& statements) {
  return "def f(float(B, C, H, W) x, int32(N) k) -> (y) {\n" + statements + "\n}\n";
}

TEST(Reshape, ElementCountMustStayTheSame) {
  EXPECT_ERROR("def f(float(B, 64, 12, 12) x) -> (y) {\n  y = reshape(x, B, 9000)\n}\n",
               "test.tn:2:7: error: reshape of 'x' [B, 64, 12, 12] into [B, 9000] changes the "
               "number of elements (B*9216 vs B*9000)");
  EXPECT_ERROR(body("  y = reshape(x, B, C * H)"),
               "reshape of 'x' [B, C, H, W] into [B, C*H] changes the number of elements "
               "(B*C*H*W vs B*C*H)");
  // Equal only for some sizes (H = W, W even): not provably the same.
  EXPECT_ERROR(body("  y = reshape(x, B, C * H * H)"), "changes the number of elements");
  EXPECT_ERROR(body("  y = reshape(x, B, C, H, 2, W / 2)"), "(B*C*H*W vs B*C*H*(W / 2)*2)");
  // Products in any order and grouping are the same polynomial.
  check_ok(body("  y = reshape(x, W * (H * B), C)"));
  check_ok("def f(float(N, 4) x) -> (y) {\n  y = reshape(x, N * 2, 4 / 2)\n}\n");
}

TEST(Reshape, SizesAreSizeExpressions) {
  EXPECT_ERROR(body("  y = reshape(x, B, C * H * W * k(0))"),
               "the sizes of a reshape must be size expressions");
  EXPECT_ERROR(body("  y = reshape(x, B, Q)"), "'Q' is not a size parameter of 'f'");
  EXPECT_ERROR(body("  y = reshape(x, B, C * H * W / N)"), "divides by a size, not by a constant");
}

TEST(Reshape, Misuse) {
  EXPECT_ERROR(body("  y = reshape(z, B)"), "test.tn:2:15: error: unknown name 'z'");
  EXPECT_ERROR(body("  y = reshape(B, B)"), "reshape takes a tensor, but 'B' is a size parameter");
  EXPECT_ERROR(body("  y(b) = reshape(x, B)"),
               "'reshape' is a statement of its own: 'y = reshape(x, sizes...)', not part of an "
               "expression");
  EXPECT_ERROR(body("  y = 2 * reshape(x, B)"), "'reshape' is a statement of its own");
  EXPECT_ERROR(body("  y = reshape(x, B, C * H * W) where b in 0:B"),
               "a reshape takes no 'where' clause");
  EXPECT_ERROR(body("  y = reshape(2, B)"), "expected the name of the tensor to reshape");
  EXPECT_ERROR(body("  reshape(i) = x(i, 0, 0, 0)"),
               "'reshape' is a builtin function and cannot name a tensor");
  EXPECT_ERROR(body("  y = reshape(x, B, C * H * W)\n  y = reshape(x, B * C, H * W)"),
               "size mismatch: 'y' is float32(B, C*H*W) but the reshape is float32(B*C, H*W)");
}

Tensor iota(std::vector<int64_t> shape) {
  Tensor t(ElemType::F64, std::move(shape));
  for (int64_t e = 0; e < t.numel(); ++e) t.set(e, double(e));
  return t;
}

// Every element keeps its row-major position: reshaping 0, 1, 2, ... gives
// 0, 1, 2, ... in the new shape, through splits, merges and size-1 dimensions.
TEST(Reshape, KeepsRowMajorOrder) {
  const char* src = R"(
def f(double(B, T, 4) x) -> (flat, heads, merged, ones) {
  flat = reshape(x, B * T * 4)
  heads = reshape(x, B, T, 2, 4 / 2)
  merged = reshape(heads, B * T, 4)
  ones = reshape(flat, 1, B, 1, T * 4, 1)
}
)";
  std::vector<Tensor> out = check_run(src, {iota({2, 3, 4})});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{24}));
  EXPECT_EQ(out[1].shape(), (std::vector<int64_t>{2, 3, 2, 2}));
  EXPECT_EQ(out[2].shape(), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(out[3].shape(), (std::vector<int64_t>{1, 2, 1, 12, 1}));
  for (const Tensor& t : out)
    for (int64_t e = 0; e < t.numel(); ++e) ASSERT_EQ(t.get(e), double(e));
}

// A split of heads, a permutation and a merge back: the transformer's
// reshape(B, T, NH, D).permute(0, 2, 1, 3) and its inverse.
TEST(Reshape, SplitPermuteMerge) {
  const char* src = R"(
def f(double(B, T, 4) q) -> (per_head, back) {
  h = reshape(q, B, T, 2, 2)
  per_head(b, n, t, d) = h(b, t, n, d)
  p(b, t, n, d) = per_head(b, n, t, d)
  back = reshape(p, B, T, 4)
}
)";
  Tensor q = iota({1, 3, 4});
  std::vector<Tensor> out = check_run(src, {q});
  ASSERT_EQ(out.size(), 2u);
  // per_head[0, n, t, d] = q[0, t, 2n + d]
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t t = 0; t < 3; ++t)
      for (int64_t d = 0; d < 2; ++d)
        EXPECT_EQ(out[0].get((n * 3 + t) * 2 + d), q.get(t * 4 + 2 * n + d));
  for (int64_t e = 0; e < 12; ++e) EXPECT_EQ(out[1].get(e), q.get(e));
}

// In a called function (inlined), in a loop, of any element type.
TEST(Reshape, InCallsLoopsAndOtherTypes) {
  const char* src = R"(
def flatten(double(N, M) a) -> (v) {
  v = reshape(a, N * M)
}
def f(double(N, M) x, int32(N, M) k) -> (s, kv) {
  s(i) = float64(0) where i in 0:N * M
  for it in 0:2 {
    v = flatten(x)
    s(i) = s(i) + v(i)
  }
  kv = reshape(k, M, N)
}
)";
  Tensor x = iota({2, 3});
  Tensor k(ElemType::I32, {2, 3});
  for (int64_t e = 0; e < 6; ++e) k.set(e, double(10 * e));
  std::vector<Tensor> out = check_run(src, {x, k});
  ASSERT_EQ(out.size(), 2u);
  for (int64_t e = 0; e < 6; ++e) {
    EXPECT_EQ(out[0].get(e), 2.0 * double(e));
    EXPECT_EQ(out[1].get(e), 10.0 * double(e));
  }
  EXPECT_EQ(out[1].type(), ElemType::I32);
}

TEST(Reshape, LowersToAMarkedReadOfTheSource) {
  std::string ir =
      check_print("def f(float(B, C, H, W) x) -> (y) {\n  y = reshape(x, B, C * H * W)\n}\n", "f");
  EXPECT_NE(ir.find("attrs(reshape = true)\n  %y[b, i1]: float32[B, C*H*W] = %x[b, "
                    "{div(i1, size(H*W))}, {rem(div(i1, size(W)), size(H))}, {rem(i1, size(W))}]"),
            std::string::npos)
      << ir;
}

// Printed as source, a reshape is a reshape again (so it checks into a
// reshape, with its gradient and its view), and computes the same values.
TEST(Reshape, UnparsesAsAReshape) {
  ir::Module m = check_ok(R"(
def f(double(B, 3, 4) x) -> (y, z) {
  h = reshape(x, B, 2, 6)
  y(b, i, j) = h(b, i, j) * 2
  z = reshape(y, B * 12)
}
)");
  ASSERT_EQ(m.functions.size(), 1u);
  std::string text = tenet::testing::expect_unparse_roundtrip(m.functions[0], {{"B", 2}});
  EXPECT_NE(text.find("  h = reshape(x, B, 2, 6)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  z = reshape(y, 12*B)\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace tenet::lang
