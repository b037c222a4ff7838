// Data-dependent (computed) indices (issue 15): reads through integer
// tensors and non-affine index expressions run in the interpreter against
// values computed here by hand, compiled against the interpreter; an index
// out of range fails with the same message in both; the gradient (a
// scatter) matches the interpreter's masked sum bit for bit. Finite
// differences: models/zoo/tc_gather.tn and tc_index_math.tn in the zoo table.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "ad/grad.h"
#include "driver/driver.h"
#include "ir/interp.h"
#include "lang/check.h"
#include "support/diagnostics.h"
#include "support/error.h"
#include "support/tensor.h"

namespace tenet {
namespace {

const char* kEmbedding = R"(
def lookup(float(V, D) W, int32(B, L) I) -> (O) {
  O(b, d) +=! W(I(b, l), d)
}
)";

Tensor ints(std::vector<int64_t> shape, const std::vector<int>& values) {
  Tensor t(ElemType::I32, std::move(shape));
  for (size_t k = 0; k < values.size(); ++k) t.set(int64_t(k), values[k]);
  return t;
}

Tensor ramp(std::vector<int64_t> shape) {
  Tensor t(ElemType::F32, std::move(shape));
  for (int64_t k = 0; k < t.numel(); ++k) t.set(k, double(k));
  return t;
}

ir::Module compile(const std::string& text) {
  return lang::compile_source(SourceFile("computed.tn", text));
}

std::string error_of(const std::function<void()>& run) {
  try {
    run();
  } catch (const BindError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ComputedIndex, EmbeddingLookupMatchesHandComputedSums) {
  ir::Module m = compile(kEmbedding);
  const Tensor W = ramp({6, 3});
  const Tensor I = ints({2, 3}, {1, 5, 1, 0, 2, 4});
  std::vector<Tensor> in{W, I};
  Tensor interpreted = ir::interpret(*m.find("lookup"), in)[0];
  driver::optimise(m);
  Tensor compiled = driver::jit_compile(m, "lookup").run(in)[0];
  for (int b = 0; b < 2; ++b)
    for (int d = 0; d < 3; ++d) {
      double want = 0;
      for (int l = 0; l < 3; ++l) want += W.get(I.get(b * 3 + l) * 3 + d);
      EXPECT_EQ(interpreted.get(b * 3 + d), want) << b << ", " << d;
      EXPECT_EQ(compiled.get(b * 3 + d), want) << b << ", " << d;
    }
}

TEST(ComputedIndex, OutOfRangeIndexFailsWithTheSameMessageInBothBackends) {
  ir::Module m = compile(kEmbedding);
  std::vector<Tensor> in{ramp({20, 2}), ints({3, 2}, {1, 2, 57, 19, 0, 0})};
  const std::string want =
      "index I(1, 0) = 57 is outside [0, 20) of W dimension 0, in the read W(I(b, l), d) of "
      "the statement defining 'O' at b = 1, d = 0, l = 0";
  EXPECT_EQ(error_of([&] { ir::interpret(*m.find("lookup"), in); }), want);
  driver::optimise(m);
  auto f = driver::jit_compile(m, "lookup");
  EXPECT_EQ(error_of([&] { f.run(in); }), want);
  in[1] = ints({3, 2}, {1, 2, -1, 19, 0, 0});  // negative, too
  EXPECT_NE(error_of([&] { f.run(in); }).find("index I(1, 0) = -1 is outside [0, 20)"),
            std::string::npos);
}

TEST(ComputedIndex, IndexArithmeticAndCastsFromFloat) {
  ir::Module m = compile(R"(
def f(float(4) x, float(M) y, float(V) A, float(N) P, int32(N) off, float(R) X)
    -> (wrap, pairs, picked, shifted) {
  wrap(i) = x(i % 4) where i in 0:2*M
  pairs(i) = y(i / 2) where i in 0:2*M
  picked(n) = A(int32(P(n)))
  shifted(n, k) = X(off(n) + k) where k in 0:2
}
)");
  Tensor x = ramp({4}), y = ramp({3}), A = ramp({5}), X = ramp({7});
  Tensor P(ElemType::F32, {2});
  P.set(0, 3.7);
  P.set(1, 0.2);
  Tensor off = ints({2}, {5, 2});
  std::vector<Tensor> in{x, y, A, P, off, X};
  std::vector<Tensor> interpreted = ir::interpret(*m.find("f"), in);
  driver::optimise(m);
  std::vector<Tensor> compiled = driver::jit_compile(m, "f").run(in);
  for (const auto* out : {&interpreted, &compiled}) {
    for (int i = 0; i < 6; ++i) EXPECT_EQ((*out)[0].get(i), i % 4);
    for (int i = 0; i < 6; ++i) EXPECT_EQ((*out)[1].get(i), i / 2);
    EXPECT_EQ((*out)[2].get(0), 3);
    EXPECT_EQ((*out)[2].get(1), 0);
    EXPECT_EQ((*out)[3].get(0), 5);
    EXPECT_EQ((*out)[3].get(1), 6);
    EXPECT_EQ((*out)[3].get(2), 2);
    EXPECT_EQ((*out)[3].get(3), 3);
  }
}

Tensor longs(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  Tensor t(ElemType::I64, std::move(shape));
  for (size_t k = 0; k < values.size(); ++k) t.set(int64_t(k), double(values[k]));
  return t;
}

// 4 * 2^62 wraps to 0 in int64: the read W(1) would be inside W, silently the
// wrong element. A computed index's arithmetic is exact or an error.
TEST(ComputedIndex, IndexArithmeticBeyondInt64FailsWithTheSameMessageInBothBackends) {
  ir::Module m = compile(R"(
def f(float(V) W, int64(B) I, int64(B) J, int64(1) K) -> (big, div, taken) {
  big(b) = W(I(b) * K(0) + 1)
  div(b) = W(I(b) / J(b))
  taken(b) = W(select(I(b) > 1, 1, I(b) * K(0)))
}
)");
  const std::string overflow =
      "the index I(1)*K(0) + 1 of W dimension 0 overflows 64-bit integers "
      "(4 * 4611686018427387904), in the read W(I(b)*K(0) + 1) of the statement defining "
      "'big' at b = 1";
  const std::string by_zero =
      "the index I(1) / J(1) of W dimension 0 divides by zero (4 / 0), in the read "
      "W(I(b) / J(b)) of the statement defining 'div' at b = 1";
  const ir::Function& f = *m.find("f");
  std::vector<Tensor> in{ramp({6}), longs({2}, {0, 4}), longs({2}, {1, 0}),
                         longs({1}, {int64_t(1) << 62})};
  EXPECT_EQ(error_of([&] { ir::interpret(f, in); }), overflow);
  ir::Module optimised = m;
  driver::optimise(optimised);
  auto compiled = driver::jit_compile(optimised, "f");
  EXPECT_EQ(error_of([&] { compiled.run(in); }), overflow);
  // Only the division fails once the product fits: I(1) = 4 is multiplied by 1.
  ir::Module divides = compile(R"(
def g(float(V) W, int64(B) I, int64(B) J, int64(1) K) -> (div, taken) {
  div(b) = W(I(b) / J(b))
  taken(b) = W(select(I(b) > 1, 1, I(b) * K(0)))
}
)");
  EXPECT_EQ(error_of([&] { ir::interpret(*divides.find("g"), in); }), by_zero);
  driver::optimise(divides);
  auto g = driver::jit_compile(divides, "g");
  EXPECT_EQ(error_of([&] { g.run(in); }), by_zero);
  // The branch a select does not take is not evaluated: no overflow there.
  in[2] = longs({2}, {1, 2});
  std::vector<Tensor> interpreted = ir::interpret(*divides.find("g"), in);
  std::vector<Tensor> run = g.run(in);
  for (const auto* out : {&interpreted, &run}) {
    EXPECT_EQ((*out)[0].get(0), 0);  // W(0 / 1)
    EXPECT_EQ((*out)[0].get(1), 2);  // W(4 / 2)
    EXPECT_EQ((*out)[1].get(0), 0);  // W(0 * 2^62)
    EXPECT_EQ((*out)[1].get(1), 1);  // W(1), the product not computed
  }
}

TEST(ComputedIndex, ScatterGradientEqualsTheInterpretersMaskedSumBitForBit) {
  ir::Module m = compile(kEmbedding);
  ad::GradRequest req;
  req.vjp = true;
  req.wrt = {"W"};
  ir::Module g;
  g.functions.push_back(ad::differentiate(m, "lookup", req));
  const std::string name = g.functions[0].name;
  const int64_t V = 50, D = 70, B = 40, L = 7;  // D > one block of columns
  Tensor W = random_tensor(ElemType::F32, {V, D}, 1);
  Tensor I = random_tensor(ElemType::I32, {B, L}, 2, -1, 1, V);
  Tensor dO = random_tensor(ElemType::F32, {B, D}, 3);
  std::vector<Tensor> in{W, I, dO};
  Tensor interpreted = ir::interpret(*g.find(name), in)[1];
  driver::optimise(g);
  Tensor compiled = driver::jit_compile(g, name).run(in)[1];
  ASSERT_EQ(compiled.numel(), V * D);
  for (int64_t k = 0; k < V * D; ++k) {
    double want = 0;  // every contribution, in the order of b, l
    for (int64_t b = 0; b < B; ++b)
      for (int64_t l = 0; l < L; ++l)
        if (I.get(b * L + l) == double(k / D)) want = float(want + float(dO.get(b * D + k % D)));
    EXPECT_EQ(interpreted.get(k), want) << k;
    EXPECT_EQ(compiled.get(k), interpreted.get(k)) << k;
  }
}

TEST(ComputedIndex, AMaskedSumWhoseTargetReadsAnOutIndexStaysAReduction) {
  // d_x(i, r) +=! select(r == idx(i), ...) over j: the target idx(i) reads
  // the out index i, so it cannot be computed once per contribution outside
  // the loop over i (the scatter form did, and the C++ did not compile).
  ir::Module m = compile(R"(
def pick(float(B, K) x, int64(B) y) -> (loss) {
  idx(i) = select(y(i) >= 0, y(i) % K, 0)
  g(i, j) +=! select(r == idx(i), x(i, r), 0) where j in 0:1
  loss +=! -g(i, 0)
}
)");
  ad::GradRequest req;
  req.wrt = {"x"};
  ir::Module g;
  g.functions.push_back(ad::differentiate(m, "pick", req));
  const std::string name = g.functions[0].name;
  Tensor x = random_tensor(ElemType::F32, {5, 3}, 4);
  Tensor y(ElemType::I64, {5});
  for (int64_t b = 0; b < 5; ++b) y.set(b, double((2 * b + 1) % 3));
  std::vector<Tensor> in{x, y};
  Tensor interpreted = ir::interpret(*g.find(name), in)[1];
  driver::optimise(g);
  Tensor compiled = driver::jit_compile(g, name).run(in)[1];
  for (int64_t k = 0; k < 15; ++k) {
    EXPECT_EQ(interpreted.get(k), k % 3 == (2 * (k / 3) + 1) % 3 ? -1.0 : 0.0) << k;
    EXPECT_EQ(compiled.get(k), interpreted.get(k)) << k;
  }
}

TEST(ComputedIndex, RaggedRangesFromTensors) {
  ir::Module m = compile(R"(
def ragged(float(V, D) W, int32(NNZ) tok, int32(B) start, int32(B) end) -> (bag) {
  bag(b, d) +=! W(tok(k), d) where k in start(b):end(b)
}
)");
  const Tensor W = ramp({8, 2});
  const Tensor tok = ints({5}, {1, 2, 3, 7, 0});
  std::vector<Tensor> in{W, tok, ints({3}, {0, 2, 2}), ints({3}, {2, 2, 5})};
  Tensor interpreted = ir::interpret(*m.find("ragged"), in)[0];
  driver::optimise(m);
  Tensor compiled = driver::jit_compile(m, "ragged").run(in)[0];
  const std::vector<double> want = {2 + 4, 3 + 5, 0, 0, 6 + 14 + 0, 7 + 15 + 1};
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(interpreted.get(int64_t(k)), want[k]) << k;
    EXPECT_EQ(compiled.get(int64_t(k)), want[k]) << k;
  }
}

TEST(ComputedIndex, RaggedMaxAndMinStartFromTheirIdentities) {
  ir::Module m = compile(R"(
def f(uint32(N) x, int32(B) start, int32(B) end) -> (hi, lo) {
  hi(b) max=! x(k) where k in start(b):end(b)
  lo(b) min=! x(k) where k in start(b):end(b)
}
)");
  Tensor x(ElemType::U32, {4});
  for (int k = 0; k < 4; ++k) x.set(k, 10 + 3 * k);
  std::vector<Tensor> in{x, ints({2}, {1, 2}), ints({2}, {3, 2})};
  std::vector<Tensor> interpreted = ir::interpret(*m.find("f"), in);
  driver::optimise(m);
  std::vector<Tensor> compiled = driver::jit_compile(m, "f").run(in);
  for (const auto* out : {&interpreted, &compiled}) {
    EXPECT_EQ((*out)[0].get(0), 16);  // max of x(1), x(2)
    EXPECT_EQ((*out)[1].get(0), 13);
    EXPECT_EQ((*out)[0].get(1), 0);  // an empty bag: the identities of uint32
    EXPECT_EQ((*out)[1].get(1), 4294967295.0);
  }
}

TEST(ComputedIndex, RaggedRangeErrors) {
  auto message = [](const std::string& text) -> std::string {
    try {
      compile(text);
    } catch (const CompileError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_NE(message("def f(float(N) x, int32(N) n) -> (y) {\n  y(i) = x(i) where i in 0:n(0)\n}\n")
                .find("the range of output index 'i' cannot depend on tensor values"),
            std::string::npos);
  EXPECT_NE(
      message("def f(uint64(N) x, int32(N) n) -> (y) {\n  y min=! x(i) where i in 0:n(0)\n}\n")
          .find("a ragged range (a where clause read from a tensor) cannot mask a 'min=!' "
                "reduction of uint64"),
      std::string::npos);
  EXPECT_NE(message("def f(float(N) x, float(N) n) -> (y) {\n  y +=! x(i) where i in 0:n(0)\n}\n")
                .find("a bound of a where clause must be an integer, but 'n(0)' is float32"),
            std::string::npos);
}

TEST(ComputedIndex, IndexMustBeAnInteger) {
  try {
    compile("def f(float(N) x, float(N) p) -> (y) {\n  y(i) = x(p(i))\n}\n");
    ADD_FAILURE() << "no error";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("an index must be an integer, but 'p(i)' is float32; "
                                         "convert it with int32(...)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tenet
