// The unparser (lang/unparse.h): every program in models/ prints as source
// that checks back into a function computing the same outputs; IR that the
// checker would never make (names that are keywords, accumulations onto
// inputs, max with an init, reduce ranges not from 0, loops whose values
// cannot share one name) prints as valid source too; goldens pin the text.
// Gradient programs are covered by tests/cli/unparse_grad_test.cpp (AD is
// not linked into this suite).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "ir/builder.h"
#include "lang/check.h"
#include "lang/unparse.h"
#include "tests/lang/unparse_roundtrip.h"
#include "tests/support/golden.h"

namespace tenet::lang {
namespace {

namespace fs = std::filesystem;
using ir::Affine;
using ir::Dim;
using ir::ReduceOp;
using ir::SizeExpr;
using tenet::testing::expect_unparse_roundtrip;
using tenet::testing::model_sizes;

ir::Module compile_model(const std::string& file) {
  std::string relative = "models/" + file;
  return compile_source(
      SourceFile(relative, tenet::testing::read_file(tenet::testing::source_path(relative))));
}

TEST(Unparse, EveryModelRoundTrips) {
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(tenet::testing::source_path("models"))) {
    if (entry.path().extension() != ".tn") continue;
    std::string file = entry.path().filename().string();
    ir::Module m = compile_model(file);
    for (const ir::Function& fn : m.functions) {
      std::string key = file + ":" + fn.name;
      SCOPED_TRACE(key);
      auto sizes = model_sizes().find(key);
      if (sizes == model_sizes().end()) {
        ADD_FAILURE() << "no sizes for " << key << " in model_sizes()";
        continue;
      }
      expect_unparse_roundtrip(fn, sizes->second);
      ++checked;
    }
  }
  EXPECT_EQ(checked, int(model_sizes().size()));
}

TEST(Unparse, ModelGoldens) {
  ir::Module routing = compile_model("routing.tn");
  tenet::testing::expect_golden("lang/unparse/routing.tn", unparse(*routing.find("routing")));
  ir::Module pool = compile_model("maxpool.tn");
  tenet::testing::expect_golden("lang/unparse/maxpool.tn", unparse(*pool.find("maxpool2x2")));
}

TEST(Unparse, WithoutComments) {
  ir::Module routing = compile_model("routing.tn");
  std::string text = unparse(*routing.find("routing"), UnparseOptions{false});
  EXPECT_EQ(text.find('#'), std::string::npos) << text;
}

ir::Expr read(const ir::ValuePtr& v, std::vector<std::string> idx, bool guarded = false) {
  std::vector<Affine> a;
  for (const auto& i : idx) a.push_back(Affine::var(i));
  return ir::make_read(v, a, guarded);
}

// Names the language reserves or cannot spell, literals the checker would
// type differently on their own, integer arithmetic, casts, sizes as values.
TEST(Unparse, NamesLiteralsAndTypes) {
  ir::FunctionBuilder fb("exp");  // a builtin's name
  SizeExpr N = SizeExpr::sym("N");
  auto x = fb.input("for", ElemType::F64, {N});  // a keyword
  auto label = fb.input("label", ElemType::I32, {N});
  // An index named like a tensor defined later, and one named like a size.
  auto d = fb.compute(
      "d_x.1", {{"y", 0, N}}, {}, ReduceOp::None,
      ir::make_binary(ir::BinOp::Add, read(x, {"y"}), ir::make_const(0.5, ElemType::F64)), nullptr,
      ElemType::F64);
  auto y =
      fb.compute("y", {{"N", 0, N}}, {}, ReduceOp::None,
                 ir::make_binary(ir::BinOp::Mul, ir::make_cast(ir::make_index("N"), ElemType::F64),
                                 read(d, {"N"})),
                 nullptr, ElemType::F64);
  // A right side of literals only, in float64: the checker would make float32.
  auto c = fb.compute("c", {{"i", 0, N}}, {}, ReduceOp::None,
                      ir::make_binary(ir::BinOp::Add, ir::make_const(0.1, ElemType::F64),
                                      ir::make_const(1e-300, ElemType::F64)),
                      nullptr, ElemType::F64);
  // A comparison of two int64 literals, a bool constant, a cast to bool,
  // an int32 label against an int64 index, a size as a value.
  auto two_lits = ir::make_binary(ir::BinOp::Lt, ir::make_const(1, ElemType::I64),
                                  ir::make_const(2, ElemType::I64));
  auto cond = ir::make_binary(ir::BinOp::And, two_lits,
                              ir::make_binary(ir::BinOp::Or, ir::make_const(0, ElemType::Bool),
                                              ir::make_cast(read(label, {"i"}), ElemType::Bool)));
  auto hit = fb.compute(
      "hit", {{"i", 0, N}}, {}, ReduceOp::None,
      ir::make_select(
          ir::make_binary(
              ir::BinOp::And, cond,
              ir::make_binary(
                  ir::BinOp::Eq, ir::make_cast(read(label, {"i"}), ElemType::I64),
                  ir::make_binary(ir::BinOp::Sub, ir::make_size(N), ir::make_index("i")))),
          ir::make_const(-2, ElemType::F64),
          ir::make_unary(ir::UnOp::Neg,
                         ir::make_binary(ir::BinOp::Sub, read(y, {"i"}),
                                         ir::make_unary(ir::UnOp::Neg, read(c, {"i"}))))),
      nullptr, ElemType::F64);
  // Right-nested sums keep their parentheses (float addition is not associative).
  auto sum = fb.compute(
      "sum", {{"i", 0, N}}, {}, ReduceOp::None,
      ir::make_binary(ir::BinOp::Add, read(hit, {"i"}),
                      ir::make_binary(ir::BinOp::Add, read(y, {"i"}),
                                      ir::make_binary(ir::BinOp::Pow, read(c, {"i"}),
                                                      ir::make_const(2, ElemType::F64)))),
      nullptr, ElemType::F64);
  fb.output(sum, "for_sum");
  fb.output(d, "d_x");
  ir::Function fn = fb.finish();
  std::string text = expect_unparse_roundtrip(fn, {{"N", 5}});
  tenet::testing::expect_golden("lang/unparse/names_literals.tn", text);
}

// Names that are builtins, type names or keywords of the language's one
// table (ir/builtins.h) are renamed: the unparser's own list had only the
// first twelve builtins and no float16 or uint types, so these printed as
// source that did not parse. Every call prints by its builtin's name.
TEST(Unparse, NamesFromTheVocabularyAreRenamed) {
  ir::FunctionBuilder fb("floor");
  SizeExpr N = SizeExpr::sym("N");
  auto x = fb.input("float16", ElemType::F32, {N});
  auto w = fb.input("stop_gradient", ElemType::F32, {N});
  auto y = fb.compute(
      "sign", {{"rsqrt", 0, N}}, {}, ReduceOp::None,
      ir::make_binary(
          ir::BinOp::Max, ir::make_binary(ir::BinOp::Atan2, read(x, {"rsqrt"}), read(w, {"rsqrt"})),
          ir::make_unary(ir::UnOp::Abs, ir::make_unary(ir::UnOp::Rsqrt, read(w, {"rsqrt"})))));
  auto z = fb.compute("z", {{"i", 0, N}}, {}, ReduceOp::None,
                      ir::make_unary(ir::UnOp::Cbrt, read(y, {"i"})));
  fb.output(z, "uint64");
  ir::Function fn = fb.finish();
  std::string text = expect_unparse_roundtrip(fn, {{"N", 4}});
  for (const char* call : {"fmax(", "atan2(", "abs(", "rsqrt(", "cbrt("})
    EXPECT_NE(text.find(call), std::string::npos) << call << " in\n" << text;
  for (const char* renamed : {"def floor_1(", "float32(N) float16_1,", "stop_gradient_1)",
                              "sign_1(rsqrt_1) =", "uint64_1(i) =", "-> (uint64_1)"})
    EXPECT_NE(text.find(renamed), std::string::npos) << renamed << " in\n" << text;
}

// Accumulations the language has no operator for: onto an input, onto a
// version still needed later, max onto an existing tensor; reduce ranges
// that do not start at 0; an input and a repeated value as outputs.
TEST(Unparse, Accumulations) {
  ir::FunctionBuilder fb("acc");
  SizeExpr N = SizeExpr::sym("N"), M = SizeExpr::sym("M");
  auto x = fb.input("x", ElemType::F32, {N, M});
  auto u = fb.input("u", ElemType::F32, {N});
  auto s0 = fb.compute("s", {{"i", 0, N}}, {{"j", 0, M}}, ReduceOp::Sum, read(x, {"i", "j"}));
  auto s1 = fb.compute("s", {{"i", 0, N}}, {{"j", 1, M}}, ReduceOp::Sum, read(x, {"i", "j"}), s0);
  auto a = fb.compute("a", {{"i", 0, N}}, {}, ReduceOp::Sum, read(s1, {"i"}), u);
  auto t = fb.compute("t", {{"i", 0, N}}, {{"j", 0, M}}, ReduceOp::Sum, read(x, {"i", "j"}), a);
  auto m = fb.compute("m", {{"i", 0, N}}, {{"j", 0, M - SizeExpr(1)}}, ReduceOp::Max,
                      read(x, {"i", "j"}), u);
  auto after = fb.compute("after", {{"i", 0, N}}, {}, ReduceOp::None,
                          ir::make_binary(ir::BinOp::Mul, read(a, {"i"}), read(t, {"i"})));
  fb.output(after);
  fb.output(m);
  fb.output(x, "x_again");
  fb.output(after, "after_again");
  ir::Function fn = fb.finish();
  std::string text = expect_unparse_roundtrip(fn, {{"N", 3}, {"M", 4}});
  tenet::testing::expect_golden("lang/unparse/accumulations.tn", text);
}

// Loops: a carried tensor whose initial value is read after the loop (so it
// cannot take the carried name), one carried through two nested loops, a
// live-out, and the loop variable in an index and as a value.
TEST(Unparse, Loops) {
  ir::FunctionBuilder fb("loops");
  SizeExpr N = SizeExpr::sym("N");
  auto x = fb.input("x", ElemType::F32, {N});
  auto w = fb.input("w", ElemType::F32, {SizeExpr(3), N});
  auto h0 = fb.compute("h", {{"i", 0, N}}, {}, ReduceOp::None, read(x, {"i"}));
  fb.begin_loop("it", 3);
  auto h = fb.carry(h0, "h");
  auto g = fb.compute(
      "g", {{"i", 0, N}}, {}, ReduceOp::None,
      ir::make_binary(ir::BinOp::Mul, ir::make_unary(ir::UnOp::Tanh, read(h, {"i"})),
                      ir::make_read(w, {Affine{{{"it", 1}}, SizeExpr(0)}, Affine::var("i")})));
  fb.begin_loop("r", 2);
  auto gi = fb.carry(g, "g");
  auto g2 = fb.compute("g", {{"i", 0, N}}, {}, ReduceOp::Sum,
                       ir::make_cast(ir::make_index("r"), ElemType::F32), gi);
  auto g_out = fb.end_loop({g2}, {});
  auto hn = fb.compute("h", {{"i", 0, N}}, {}, ReduceOp::None,
                       ir::make_binary(ir::BinOp::Add, read(g_out[0], {"i"}), read(h, {"i"})));
  auto res = fb.end_loop({hn}, {g_out[0]});
  auto out = fb.compute("out", {{"i", 0, N}}, {}, ReduceOp::None,
                        ir::make_binary(ir::BinOp::Sub, read(res[0], {"i"}), read(h0, {"i"})));
  fb.output(out);
  fb.output(res[1], "last_g");
  ir::Function fn = fb.finish();
  std::string text = expect_unparse_roundtrip(fn, {{"N", 4}});
  tenet::testing::expect_golden("lang/unparse/loops.tn", text);
}

// An input dimension the language cannot declare gets a fresh size name;
// reads that the checker would prove out of bounds (kept under a select in
// the IR) are printed guarded.
TEST(Unparse, CompositeInputSizesAndGuards) {
  ir::FunctionBuilder fb("shifted");
  SizeExpr N = SizeExpr::sym("N");
  auto x = fb.input("x", ElemType::F32, {N});
  auto d = fb.input("d", ElemType::F32, {N - SizeExpr(2)});
  // y(i) = select(i >= 1, x(i - 1), 0) * d(i), for i in [0, N - 2)
  auto cond = ir::make_binary(ir::BinOp::Ge, ir::make_index("i"), ir::make_const(1, ElemType::I64));
  auto y = fb.compute(
      "y", {{"i", 0, N - SizeExpr(2)}}, {}, ReduceOp::None,
      ir::make_binary(ir::BinOp::Mul,
                      ir::make_select(cond, ir::make_read(x, {Affine{{{"i", 1}}, SizeExpr(-1)}}),
                                      ir::make_const(0, ElemType::F32)),
                      read(d, {"i"})));
  fb.output(y);
  ir::Function fn = fb.finish();
  std::string text = expect_unparse_roundtrip(fn, {{"N", 6}});
  EXPECT_NE(text.find("float32(d_dim0) d"), std::string::npos) << text;
  EXPECT_NE(text.find("d_dim0 = N - 2"), std::string::npos) << text;
  EXPECT_NE(text.find("x?(i - 1)"), std::string::npos) << text;
}

TEST(Unparse, MinSizeThatInferenceCannotReproduceIsAnError) {
  ir::FunctionBuilder fb("clip");
  SizeExpr N = SizeExpr::sym("N"), M = SizeExpr::sym("M");
  fb.size_param("M");
  auto x = fb.input("x", ElemType::F32, {N});
  auto y = fb.compute("y", {{"i", 0, SizeExpr::min(N, M)}}, {}, ReduceOp::None,
                      read(x, {"i"}, /*guarded=*/true));
  fb.output(y);
  ir::Function fn = fb.finish();
  try {
    unparse(fn);
    ADD_FAILURE() << "expected an error";
  } catch (const CompileError& e) {
    EXPECT_EQ(std::string(e.what()),
              "error: cannot print 'clip' as source: the size 'min(M, N)' has no source form "
              "(the language writes no min or max of sizes)");
  }
}

}  // namespace
}  // namespace tenet::lang
