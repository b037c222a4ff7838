// Range inference: unit tests of infer_ranges() on hand-built problems, and
// the same rules seen through source programs (output shapes).
#include <gtest/gtest.h>

#include <string>

#include "ir/ir.h"
#include "lang/ranges.h"
#include "support/diagnostics.h"
#include "tests/lang/check_util.h"

namespace tenet::lang::detail {
namespace {

using ir::SizeExpr;

SizeExpr S(const char* name) {
  return SizeExpr::sym(name);
}

ir::Affine affine(std::vector<std::pair<std::string, int64_t>> terms, SizeExpr offset = 0) {
  return ir::Affine{std::move(terms), offset};
}

RangeIndex index(const std::string& name, bool lhs) {
  RangeIndex ix;
  ix.name = name;
  ix.ir_name = name;
  ix.on_lhs = lhs;
  return ix;
}

RangeRead read(const std::string& tensor, std::vector<SizeExpr> shape, std::vector<ir::Affine> dims,
               bool guarded = false) {
  RangeRead r;
  r.tensor = tensor;
  r.shape = std::move(shape);
  r.guarded = guarded;
  r.spans.resize(dims.size());
  r.dims = std::move(dims);
  return r;
}

struct Problem {
  SourceFile file{"ranges.tn", ""};
  Diagnostics diags{file};
  std::vector<RangeIndex> indices;
  std::vector<RangeRead> reads;
  std::map<std::string, int64_t> loops;

  bool solve() { return infer_ranges(indices, reads, loops, diags); }
  const RangeIndex& at(const std::string& name) const {
    for (const RangeIndex& ix : indices)
      if (ix.name == name) return ix;
    throw std::runtime_error("no index " + name);
  }
  std::string messages() const {
    std::string out;
    for (const Diagnostic& d : diags.all()) out += d.message + "\n";
    return out;
  }
};

TEST(Ranges, PlainUseTakesTheDimension) {
  Problem p;
  p.indices = {index("i", true), index("k", false)};
  p.reads = {read("x", {S("N"), S("K")}, {affine({{"i", 1}}), affine({{"k", 1}})})};
  ASSERT_TRUE(p.solve()) << p.messages();
  EXPECT_EQ(p.at("i").lo, SizeExpr(0));
  EXPECT_EQ(p.at("i").hi, S("N"));
  EXPECT_EQ(p.at("k").hi, S("K"));
}

TEST(Ranges, ConvolutionStrideTwo) {
  // y(o) +=! x(2*o + k) * w(k): H = 20, K = 9 gives 6 outputs.
  Problem p;
  p.indices = {index("o", true), index("k", false)};
  p.reads = {read("x", {SizeExpr(20)}, {affine({{"o", 2}, {"k", 1}})}),
             read("w", {SizeExpr(9)}, {affine({{"k", 1}})})};
  ASSERT_TRUE(p.solve()) << p.messages();
  EXPECT_EQ(p.at("o").hi, SizeExpr(6));
  EXPECT_EQ(p.at("k").hi, SizeExpr(9));
}

TEST(Ranges, SymbolicConvolutionOutput) {
  Problem p;
  p.indices = {index("o", true), index("k", false)};
  p.reads = {read("x", {S("H")}, {affine({{"o", 2}, {"k", 1}})}),
             read("w", {SizeExpr(9)}, {affine({{"k", 1}})})};
  ASSERT_TRUE(p.solve()) << p.messages();
  EXPECT_EQ(p.at("o").hi.str(), "(H - 9) / 2 + 1");
}

TEST(Ranges, ChannelSplitNeedsOneKnownIndex) {
  // p(t, d) = c(8*t + d) with d in 0:8 from a where clause: t gets 32 of 256.
  Problem p;
  p.indices = {index("t", true), index("d", true)};
  p.indices[1].where = std::pair{SizeExpr(0), SizeExpr(8)};
  p.reads = {read("c", {SizeExpr(256)}, {affine({{"t", 8}, {"d", 1}})})};
  ASSERT_TRUE(p.solve()) << p.messages();
  EXPECT_EQ(p.at("t").hi, SizeExpr(32));
  EXPECT_EQ(p.at("d").hi, SizeExpr(8));

  Problem q;  // without the where clause both are unknown: ambiguous
  q.indices = {index("t", true), index("d", true)};
  q.reads = {read("c", {SizeExpr(256)}, {affine({{"t", 8}, {"d", 1}})})};
  EXPECT_FALSE(q.solve());
  EXPECT_NE(q.messages().find("ambiguous range for index 't'"), std::string::npos) << q.messages();
}

TEST(Ranges, NegativeCoefficients) {
  // r(i) = x(N - 1 - i): i in [0, N).
  Problem p;
  p.indices = {index("i", true)};
  p.reads = {read("x", {S("N")}, {affine({{"i", -1}}, S("N") - SizeExpr(1))})};
  ASSERT_TRUE(p.solve()) << p.messages();
  EXPECT_EQ(p.at("i").hi, S("N"));

  // y(i) +=! x(10 - 2*i + k) * w(k), k in [0, 3): 10 - 2*i >= 0, so i in [0, 6).
  Problem q;
  q.indices = {index("i", true), index("k", false)};
  q.reads = {read("x", {SizeExpr(20)}, {affine({{"i", -2}, {"k", 1}}, SizeExpr(10))}),
             read("w", {SizeExpr(3)}, {affine({{"k", 1}})})};
  ASSERT_TRUE(q.solve()) << q.messages();
  EXPECT_EQ(q.at("i").hi, SizeExpr(6));
}

TEST(Ranges, WhereOverridesInference) {
  Problem p;
  p.indices = {index("i", true)};
  p.indices[0].where = std::pair{SizeExpr(0), S("N") - SizeExpr(1)};
  p.reads = {read("x", {S("N")}, {affine({{"i", 1}}, SizeExpr(1))}),
             read("x", {S("N")}, {affine({{"i", 1}})})};
  ASSERT_TRUE(p.solve()) << p.messages();
  EXPECT_EQ(p.at("i").hi, S("N") - SizeExpr(1));
}

TEST(Ranges, SeveralAffineCandidatesTakeTheSmallest) {
  Problem p;
  p.indices = {index("i", true)};
  p.reads = {read("x", {SizeExpr(10)}, {affine({{"i", 1}}, SizeExpr(2))}),
             read("y", {SizeExpr(10)}, {affine({{"i", 2}})})};
  ASSERT_TRUE(p.solve()) << p.messages();
  EXPECT_EQ(p.at("i").hi, SizeExpr(5));
}

TEST(Ranges, LoopVariablesAreKnown) {
  // h(i) = hist(it, i + it) inside a loop over it in [0, 3).
  Problem p;
  p.indices = {index("i", true)};
  p.loops["it"] = 3;
  p.reads = {
      read("hist", {SizeExpr(3), S("N")}, {affine({{"it", 1}}), affine({{"i", 1}, {"it", 1}})})};
  ASSERT_TRUE(p.solve()) << p.messages();
  EXPECT_EQ(p.at("i").hi, S("N") - SizeExpr(2));
}

TEST(Ranges, TargetDimensionsAndPlainUsesMustAgree) {
  Problem p;
  p.indices = {index("i", true)};
  p.indices[0].target_dim = S("N");
  p.indices[0].target_what = "dimension 0 of 'acc'";
  p.reads = {read("x", {S("M")}, {affine({{"i", 1}})})};
  EXPECT_FALSE(p.solve());
  EXPECT_NE(p.messages().find("size mismatch for index 'i': dimension 0 of 'acc' has size N but "
                              "dimension 0 of 'x' has size M"),
            std::string::npos)
      << p.messages();
}

TEST(Ranges, GuardedReadsNeitherConstrainNorGetChecked) {
  Problem p;
  p.indices = {index("i", true)};
  p.reads = {read("x", {S("N")}, {affine({{"i", 1}})}),
             read("x", {S("N")}, {affine({{"i", 1}}, SizeExpr(5))}, true)};
  ASSERT_TRUE(p.solve()) << p.messages();
  EXPECT_EQ(p.at("i").hi, S("N"));
}

TEST(Ranges, ProvablyOutOfBoundsReadsAreErrors) {
  Problem p;
  p.indices = {index("i", true)};
  p.reads = {read("x", {S("N")}, {affine({{"i", 1}})}),
             read("x", {S("N")}, {affine({{"i", 1}}, SizeExpr(-1))})};
  EXPECT_FALSE(p.solve());
  EXPECT_NE(p.messages().find("reads out of bounds: it reaches -1 but indices start at 0"),
            std::string::npos)
      << p.messages();
}

TEST(Ranges, EmptyAndNonZeroStartingRanges) {
  Problem p;
  p.indices = {index("i", true), index("k", false)};
  p.indices[0].where = std::pair{SizeExpr(1), S("N")};
  p.indices[1].where = std::pair{SizeExpr(3), SizeExpr(3)};
  EXPECT_FALSE(p.solve());
  EXPECT_NE(p.messages().find("the range of output index 'i' must start at 0, not 1"),
            std::string::npos);
  EXPECT_NE(p.messages().find("empty range for index 'k': [3, 3)"), std::string::npos);
}

// The same rules through source text: the inferred output shapes.
std::string output_shape(const std::string& text) {
  ir::Module m = tenet::testing::check_ok(text);
  if (m.functions.empty()) return "";
  std::string out;
  for (const SizeExpr& d : m.functions.back().outputs.at(0)->shape)
    out += (out.empty() ? "" : ", ") + d.str();
  return out;
}

TEST(RangesFromSource, OutputShapes) {
  EXPECT_EQ(output_shape("def f(float(B, C, 20, 20) x, float(O, C, 9, 9) w) -> (y) {\n"
                         "  y(b, o, i, j) +=! x(b, c, 2*i + ki, 2*j + kj) * w(o, c, ki, kj)\n}"),
            "B, O, 6, 6");
  EXPECT_EQ(output_shape("def f(float(B, C, H, W) x, float(O, C, 9, 9) w) -> (y) {\n"
                         "  y(b, o, i, j) +=! x(b, c, 2*i + ki, 2*j + kj) * w(o, c, ki, kj)\n}"),
            "B, O, (H - 9) / 2 + 1, (W - 9) / 2 + 1");
  EXPECT_EQ(output_shape("def f(float(B, 256, H, W) c) -> (p) {\n"
                         "  p(b, t, y, x, d) = c(b, 8*t + d, y, x) where d in 0:8\n}"),
            "B, 32, H, W, 8");
  EXPECT_EQ(output_shape("def f(float(N) x) -> (r) {\n  r(i) = x(N - 1 - i)\n}"), "N");
  EXPECT_EQ(output_shape("def f(float(N) x) -> (d) {\n"
                         "  d(i) = x(i + 1) - x(i) where i in 0:N - 1\n}"),
            "N - 1");
  EXPECT_EQ(output_shape("def f(float(N) x, float(K) w) -> (y) {\n"
                         "  y(i) +=! x(i + k) * w(k)\n}"),
            "N - K + 1");
  EXPECT_EQ(output_shape("def f(float(H) x) -> (y) {\n"
                         "  y(i) = x(i) where i in 0:(H - 9) / 2 + 1\n}"),
            "(H - 9) / 2 + 1");
}

}  // namespace
}  // namespace tenet::lang::detail
