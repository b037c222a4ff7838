// Compile time grows (nearly) linearly with the size of a program: each shape
// of bench/scale/gen.py that once hit a quadratic pass is compiled at n and
// 10 n (checker, the pass pipeline, C++ code generation; AD where the cost
// was in gradients), and the larger must take less than 30 times as long
// (linear is 10, quadratic 100) and at most a generous absolute time. Times
// are CPU times, the best of a few runs, so a loaded machine does not fail
// the test. Also: the limits that keep generated code and the stack bounded
// (rank, indices per statement, nesting) are errors, never crashes.
#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <functional>
#include <string>

#include "ad/grad.h"
#include "codegen/cpp.h"
#include "driver/driver.h"
#include "ir/ir_parser.h"
#include "ir/printer.h"
#include "lang/check.h"
#include "passes/pipeline.h"
#include "support/diagnostics.h"

namespace tenet {
namespace {

std::string chain(int n) {
  std::string s = "def f(float(N) t0) -> (t" + std::to_string(n) + ") {\n";
  for (int k = 0; k < n; ++k)
    s += "  t" + std::to_string(k + 1) + "(i) = t" + std::to_string(k) + "(i) + 1\n";
  return s + "}\n";
}

std::string funcs(int n) {
  std::string s;
  for (int k = 0; k < n; ++k)
    s += "def f" + std::to_string(k) + "(float(N) x) -> (y) {\n  y(i) = x(i) * 2 + 1\n}\n";
  return s;
}

// A reduction and an element-wise statement per step, all sharing the loop over b.
std::string mixed(int n) {
  std::string s = "def f(float(B, J) t0) -> (t" + std::to_string(n) + ") {\n";
  for (int k = 0; k < n; ++k) {
    const std::string t = "t" + std::to_string(k), sum = "s" + std::to_string(k);
    s += "  " + sum + "(b) +=! " + t + "(b, j) * " + t + "(b, j)\n";
    s += "  t" + std::to_string(k + 1) + "(b, j) = " + t + "(b, j) / (1 + " + sum + "(b))\n";
  }
  return s + "}\n";
}

// One statement reading n inputs, as a balanced sum (nesting log2 n deep).
std::string wide(int n) {
  std::vector<std::string> terms;
  std::string params;
  for (int k = 0; k < n; ++k) {
    terms.push_back("x" + std::to_string(k) + "(i)");
    params += (k ? ", float(N) x" : "float(N) x") + std::to_string(k);
  }
  while (terms.size() > 1) {
    std::vector<std::string> pairs;
    for (size_t k = 0; k + 1 < terms.size(); k += 2)
      pairs.push_back("(" + terms[k] + " + " + terms[k + 1] + ")");
    if (terms.size() % 2) pairs.push_back(terms.back());
    terms = pairs;
  }
  return "def f(" + params + ") -> (y) {\n  y(i) = " + terms[0] + "\n}\n";
}

// n loops in a row, each carrying t0.
std::string loops(int n) {
  std::string s = "def f(float(N) x) -> (y) {\n  t0(i) = x(i)\n";
  for (int k = 0; k < n; ++k)
    s += "  for it" + std::to_string(k) + " in 0:2 { t0(i) = t0(i) + 1 }\n";
  return s + "  y(i) = t0(i)\n}\n";
}

std::string rank_copy(int rank) {
  std::string dims, idx;
  for (int k = 0; k < rank; ++k) {
    dims += (k ? ", N" : "N") + std::to_string(k);
    idx += (k ? ", i" : "i") + std::to_string(k);
  }
  return "def f(float(" + dims + ") x) -> (y) {\n  y(" + idx + ") = x(" + idx + ")\n}\n";
}

// Checker, pass pipeline and C++ of every function.
void compile(const std::string& text) {
  ir::Module m = lang::compile_source(SourceFile("scale.tn", text));
  driver::optimise(m);
  driver::emit_cpp(m);
}

// Checker, AD (every input, one cotangent per output) and the pipeline on the gradient.
void compile_gradient(const std::string& text) {
  ir::Module m = lang::compile_source(SourceFile("scale.tn", text));
  ad::GradRequest req;
  req.vjp = true;
  ir::Module g;
  g.functions.push_back(ad::differentiate(m.functions.at(0), req));
  driver::optimise(g);
}

double cpu_seconds(const std::function<void()>& work, int runs) {
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const std::clock_t start = std::clock();
    work();
    best = std::min(best, double(std::clock() - start) / CLOCKS_PER_SEC);
  }
  return best;
}

// The larger program (10 times the size) takes less than 30 times as long as
// the smaller, and at most `cap` seconds.
void expect_near_linear(const std::string& what, const std::function<void(int)>& work, int n,
                        double cap) {
  // Never less than a millisecond, so clock granularity cannot fail the ratio.
  const double small = std::max(1e-3, cpu_seconds([&] { work(n); }, 3));
  double large = cpu_seconds([&] { work(10 * n); }, 1);
  if (large > 30 * small) large = std::min(large, cpu_seconds([&] { work(10 * n); }, 2));
  EXPECT_LT(large, 30 * small) << what << ": " << n << " took " << small << " s, " << 10 * n
                               << " took " << large << " s";
  EXPECT_LT(large, cap) << what << " at " << 10 * n;
}

TEST(CompileScaling, ChainedStatements) {
  expect_near_linear(
      "chained statements", [](int n) { compile(chain(n)); }, 1000, 20);
}

TEST(CompileScaling, ManyFunctions) {
  expect_near_linear(
      "functions", [](int n) { compile(funcs(n)); }, 300, 20);
}

TEST(CompileScaling, ReductionsSharingLoops) {
  expect_near_linear(
      "reductions sharing loops", [](int n) { compile(mixed(n)); }, 300, 20);
}

TEST(CompileScaling, LoopsInARow) {
  expect_near_linear(
      "loops in a row", [](int n) { compile(loops(n)); }, 300, 20);
  // A loop's result is named after the source name ("t0.7"); it was named
  // after its init, growing by ".1" per loop ("t0.3.1.1.1...").
  const std::string text = ir::print(lang::compile_source(SourceFile("l.tn", loops(50))));
  EXPECT_EQ(text.find(".1.1"), std::string::npos) << text.substr(0, 2000);
  EXPECT_NE(text.find("-> (%t0.150 = next %t0.149)"), std::string::npos) << text.substr(0, 2000);
}

TEST(CompileScaling, GradientOfChain) {
  expect_near_linear(
      "gradient of chained statements", [](int n) { compile_gradient(chain(n)); }, 500, 20);
}

TEST(CompileScaling, GradientOfWideStatement) {
  expect_near_linear(
      "gradient of a statement with many reads", [](int n) { compile_gradient(wide(n)); }, 300, 20);
}

// Generated code grows linearly with the rank (it was quadratic: strides as
// full products, indentation and line breaks at every loop level).
TEST(CompileScaling, GeneratedCodeLinearInRank) {
  auto chars = [](int rank) {
    ir::Module m = lang::compile_source(SourceFile("rank.tn", rank_copy(rank)));
    driver::optimise(m);
    return double(driver::emit_cpp(m).source.size());
  };
  const double r8 = chars(8), r32 = chars(32);
  EXPECT_LT(r32, 5.5 * r8) << "rank 8: " << r8 << " chars, rank 32: " << r32;
}

std::string error_of(const std::string& text) {
  try {
    lang::compile_source(SourceFile("limits.tn", text));
  } catch (const CompileError& e) {
    return e.what();
  }
  return "";
}

TEST(CompileLimits, Rank) {
  EXPECT_EQ(error_of(rank_copy(32)), "");
  const std::string e = error_of(rank_copy(33));
  EXPECT_NE(e.find("limits.tn:1:"), std::string::npos) << e;
  EXPECT_NE(e.find("error: parameter 'x' has rank 33, the limit is 32"), std::string::npos) << e;
  EXPECT_NE(e.find("error: too many indices: the statement defining 'y' has 33, the limit is 32 "
                   "(each index is a loop of the generated code)"),
            std::string::npos)
      << e;
  std::string dims;
  for (int k = 0; k < 33; ++k) dims += (k ? ", N" : "N") + std::to_string(k);
  EXPECT_NE(error_of("def f(float(N) x) -> (float(" + dims + ") y) {\n  y(i) = x(i)\n}\n")
                .find("error: output 'y' has rank 33, the limit is 32"),
            std::string::npos);
}

TEST(CompileLimits, IndicesPerStatement) {
  // 1 left index and 32 reduce indices: 33 loops.
  std::string sum = "def f(float(N) x) -> (y) {\n  y(i) +=! x(i)";
  std::string where;
  for (int k = 0; k < 32; ++k) where += (k ? ", k" : " where k") + std::to_string(k) + " in 0:2";
  const std::string e = error_of(sum + where + "\n}\n");
  EXPECT_NE(e.find("limits.tn:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("too many indices: the statement defining 'y' has 33, the limit is 32"),
            std::string::npos)
      << e;
}

TEST(CompileLimits, IrTextRankAndIndices) {
  auto ir_error = [](const std::string& text) -> std::string {
    try {
      ir::parse_ir(SourceFile("limits.ir", text));
    } catch (const CompileError& e) {
      return e.what();
    }
    return "";
  };
  std::string shape, idx;
  for (int k = 0; k < 33; ++k) {
    shape += (k ? ", N" : "N") + std::to_string(k);
    idx += (k ? ", i" : "i") + std::to_string(k);
  }
  std::string params = "[" + shape + "]";
  const std::string e = ir_error("func f" + params + "(%x: float32[" + shape + "]) {\n}\n");
  EXPECT_NE(e.find("limits.ir:1:"), std::string::npos) << e;
  EXPECT_NE(e.find("rank 33, the limit is 32"), std::string::npos) << e;
  std::string reduce;
  for (int k = 0; k < 32; ++k) reduce += (k ? ", k" : "k") + std::to_string(k) + " in 0:2";
  const std::string r = ir_error("func f[N](%x: float32[N]) {\n  %y[i]: float32[N] = sum[" +
                                 reduce + "](%x[i])\n  return %y\n}\n");
  EXPECT_NE(r.find("33 indices, the limit is 32"), std::string::npos) << r;
}

// 100,000 levels of nesting are an error at the first level too deep, not a
// stack overflow, in each form the parser meets them.
TEST(CompileLimits, DeepNestingIsAnError) {
  const int n = 100000;
  auto with_value = [](const std::string& rhs) {
    return "def f(float(N) x) -> (y) {\n  y(i) = " + rhs + "\n}\n";
  };
  const std::string too_deep = "error: expression nested too deeply (the limit is 256 levels)";
  std::string chain_sum = "x(i)", parens, calls, closes;
  for (int k = 0; k < n; ++k) chain_sum += " + x(i)";
  parens = std::string(n, '(') + "x(i)" + std::string(n, ')');
  for (int k = 0; k < n; ++k) {
    calls += "exp(";
    closes += ")";
  }
  for (const std::string& rhs :
       {chain_sum, parens, calls + "x(i)" + closes, std::string(n, '-') + "x(i)"}) {
    const std::string e = error_of(with_value(rhs));
    EXPECT_NE(e.find("limits.tn:2:"), std::string::npos) << e.substr(0, 200);
    EXPECT_NE(e.find(too_deep), std::string::npos) << e.substr(0, 200);
  }
}

}  // namespace
}  // namespace tenet
