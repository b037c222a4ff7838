// The checker's rules one by one (check.cpp's list): each error is triggered
// by a minimal program and identified by its message. The exact rendering of
// one error per class is pinned by check_errors_test.cpp.
#include <gtest/gtest.h>

#include <string>

#include "ir/printer.h"
#include "tests/lang/check_util.h"

namespace tenet::lang {
namespace {

using tenet::testing::check_error;
using tenet::testing::check_ok;

TEST(CheckNames, BareNamesResolveInOrder) {
  // index, loop variable, scalar tensor, size parameter
  check_ok(R"(def f(float(N) x, float s) -> (y) {
  y(i) = x(i)
  for it in 0:2 {
    y(i) = y(i) * s + float32(i) + float32(it) + float32(N)
  }
})");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) = x(i) + z\n}", "unknown name 'z'");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) = x(i) + x\n}",
               "rank mismatch: 'x' has rank 1 but is indexed with 0 indices");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) = N(i)\n}", "'N' is not a tensor");
}

// An index that is not affine is computed: it must be an integer, and gives
// no range to the indices in it.
TEST(CheckNames, NonAffineIndicesAreComputed) {
  EXPECT_ERROR("def f(float(N) x, float(N) k) -> (y) {\n  y(i) = x(k(i))\n}",
               "an index must be an integer, but 'k(i)' is float32");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) = x(i / 2)\n}",
               "cannot infer the range of index 'i'");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) = x(N * i)\n}",
               "cannot infer the range of index 'i'");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) = x(i + 1.5) where i in 0:2\n}",
               "an index must be an integer, but 'i + 1.5' is float");
  check_ok("def f(float(N) x, int32(N) k) -> (y) {\n  y(i) = x(k(i)) + x(i / 2) + x(N * i)\n}");
  check_ok("def f(float(N) x, int8 s) -> (y) {\n  y(i) = x(i) * x(s)\n}");
  check_ok("def f(float(N) x) -> (y) {\n  y(i) = x(N - 1 - (i + 0) * 1) + x(-(-i))\n}");
  check_ok("def f(float(N) x) -> (y) {\n  y(i) = x(i + N / 2) where i in 0:N / 2\n}");
}

TEST(CheckNames, Redefinitions) {
  EXPECT_ERROR("def f(float(N) x, float(N) x) -> (y) {\n  y(i) = x(i)\n}",
               "redefinition of a parameter 'x'");
  EXPECT_ERROR("def f(float(N) x) -> (y, y) {\n  y(i) = x(i)\n}", "redefinition of output 'y'");
  EXPECT_ERROR("def f(float(N) N) -> (y) {\n  y(i) = N(i)\n}",
               "a parameter cannot have the name of a size parameter");
  EXPECT_ERROR("def f(float(N) x) -> (N) {\n  N(i) = x(i)\n}",
               "a tensor cannot have the name of a size parameter");
  EXPECT_ERROR(
      "def g(float(N) x) -> (y) {\n  y(i) = x(i)\n}\n"
      "def f(float(N) x) -> (g) {\n  g(i) = x(i)\n}",
      "a tensor cannot have the name of a function");
  EXPECT_ERROR("def f(float(N) x) -> (exp) {\n  exp(i) = x(i)\n}", "'exp' is a builtin function");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  t(i) = x(i)\n  y(t) = x(t)\n}",
               "redefinition of 't': an index cannot have the name of a tensor");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(N) = x(N)\n}",
               "an index cannot have the name of a size parameter");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) = x(i)\n  for y in 0:2 {\n  }\n}",
               "a loop variable cannot have the name of a tensor");
  EXPECT_ERROR(
      "def f(float(N) x) -> (y) {\n  y(i) = x(i)\n  for it in 0:2 {\n"
      "    for it in 0:2 {\n    }\n  }\n}",
      "a loop variable cannot have the name of a loop variable");
  EXPECT_ERROR(
      "def f(float(N) x) -> (y) {\n  y(i) = x(i)\n}\ndef f(float(N) x) -> (y) {\n"
      "  y(i) = x(i)\n}",
      "redefinition of function 'f'");
}

// Redefinitions (TC's `O = O + B`) are accepted: check_redefine_test.cpp.
TEST(CheckNames, SsaDefinitions) {
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) += x(i)\n}",
               "'+=' accumulates onto an existing tensor, but 'y' is not defined");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  x(i) += x(i)\n  y(i) = x(i)\n}",
               "cannot assign to input 'x'");
  EXPECT_ERROR(
      "def f(float(N) x) -> (y) {\n  for it in 0:2 {\n    x(i) = x(i) * 2\n  }\n"
      "  y(i) = x(i)\n}",
      "cannot assign to input 'x'");
}

TEST(CheckOutputs, MustBeDefinedAndMatchTheirDeclaration) {
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  z(i) = x(i)\n}", "output 'y' is never defined");
  EXPECT_ERROR("def f(float(N) x) -> (int32(N) y) {\n  y(i) = x(i)\n}",
               "type mismatch: output 'y' is int32 but the right side is float32");
  EXPECT_ERROR("def f(float(N) x) -> (float(N, N) y) {\n  y(i) = x(i)\n}",
               "rank mismatch: output 'y' is declared with rank 2 but is indexed with 1 indices");
  EXPECT_ERROR("def f(float(N) x) -> (float(M) y) {\n  y(i) = x(i)\n}",
               "size mismatch for index 'i': dimension 0 of 'y' has size M but dimension 0 of "
               "'x' has size N");
  EXPECT_ERROR(
      "def g(float(N) x) -> (y) {\n  y(i) = x(i)\n}\n"
      "def f(float(N) x) -> (float(N, 1) y) {\n  y = g(x)\n}",
      "rank mismatch: output 'y' is declared with rank 2 but has rank 1");
  EXPECT_ERROR(
      "def g(float(N) x) -> (y) {\n  y(i) = x(i + 1) where i in 0:N - 1\n}\n"
      "def f(float(N) x) -> (float(N) y) {\n  y = g(x)\n}",
      "size mismatch: output 'y' is declared with size N in dimension 0 but has size "
      "N - 1");
}

TEST(CheckRanks, UpdatesKeepRankTypeAndShape) {
  EXPECT_ERROR("def f(float(N, M) x) -> (s) {\n  s(i) = 0 where i in 0:N\n  s(i, j) += x(i, j)\n}",
               "rank mismatch: 's' has rank 1 but is indexed with 2 indices");
  EXPECT_ERROR("def f(float(N) x, float64(N) w) -> (s) {\n  s(i) = x(i)\n  s(i) += w(i)\n}",
               "type mismatch: 's' is float32 but the right side is float64");
  EXPECT_ERROR(
      "def f(float(N) x, float(M) w) -> (s) {\n  s(i) = x(i)\n  for it in 0:2 {\n"
      "    s(i) = w(i)\n  }\n}",
      "size mismatch for index 'i': dimension 0 of 's' has size N but dimension 0 of "
      "'w' has size M");
  EXPECT_ERROR(
      "def g(float(M) w) -> (y) {\n  y(i) = w(i)\n}\n"
      "def f(float(N) x, float(M) w) -> (s) {\n  s(i) = x(i)\n  for it in 0:2 {\n"
      "    s = g(w)\n  }\n}",
      "size mismatch: 's' is float32(N) but result 0 of 'g' is float32(M)");
}

TEST(CheckTypes, Errors) {
  EXPECT_ERROR("def f(float(N) x, float64(N) w) -> (y) {\n  y(i) = x(i) + w(i)\n}",
               "type mismatch: float32 and float64 operands of '+'");
  EXPECT_ERROR("def f(int32(N) k) -> (y) {\n  y(i) = exp(k(i))\n}",
               "'exp' needs a float, but 'k(i)' is int32");
  EXPECT_ERROR("def f(int32(N) k) -> (y) {\n  y(i) = pow(k(i), 2)\n}",
               "'pow' needs float operands, but 'k(i)' is int32");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) = select(x(i), 1, 0)\n}",
               "the condition of select must be bool, but 'x(i)' is float32");
  EXPECT_ERROR("def f(float(N) x) -> (bool(N) y) {\n  y(i) = x(i)\n}",
               "type mismatch: output 'y' is bool but the right side is float32");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) = select(x(i) && 1, 1, 0)\n}",
               "'&&' needs bool operands, but 'x(i)' is float32");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) = select(!x(i), 1, 0)\n}",
               "'!' needs a bool, but 'x(i)' is float32");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) = -(x(i) > 0)\n}",
               "'-' needs a number, but '(x(i) > 0)' is bool");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) = x(i) * float64(i)\n}",
               "type mismatch: float32 and float64 operands of '*'");
  EXPECT_ERROR("def f(float(N, K) x) -> (y) {\n  y(i) +=! x(i, k) > 0\n}",
               "'y' is bool; '+=!' cannot combine bools");
  EXPECT_ERROR("def f(float(N) x) -> (int32(N) y) {\n  y(i) = 0.5 where i in 0:N\n}",
               "type mismatch: 'y' is int32 but the right side is not an integer");
}

TEST(CheckTypes, Accepted) {
  check_ok(R"(def f(float(N) x, int32(N) k, int64(N) l) -> (a, b, c, d) {
  a(i) = select(x(i) > 0 && !(k(i) == 3) || l(i) < k(i), fmax(x(i), 0), abs(x(i)))
  b(i) = k(i) + l(i) * 2
  c(i) = float32(k(i) > 2) * exp(x(i)) + pow(x(i), 2) + sigmoid(tanh(log(sqrt(x(i)))))
  d(i) = fmin(k(i), 4) + abs(-l(i))
})");
  // bools as 0/1 in arithmetic (two of them: int32, as in C), and as tensors
  check_ok(R"(def f(float(N) x, bool(N) m) -> (a, b, c, bool(N) d) {
  a(i) = (x(i) > 0) * x(i) + m(i)
  b(i) = select(m(i), x(i) > 1, 0) + m(i) + (x(i) < 2)
  c(i) = m(i) ? 1 : 2
  d(i) = m(i) && x(i) > 0
})");
}

TEST(CheckReductions, ReducedIndicesAreTheRightOnlyOnes) {
  EXPECT_ERROR("def f(float(N) x) -> (s) {\n  s = x(i)\n}",
               "index 'i' appears only on the right of '='");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) = 1 where i in 0:N, k in 0:3\n}",
               "index 'k' appears only on the right of '='");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) = x(i) where i in 0:N, i in 0:2\n}",
               "index 'i' has two where clauses");
}

TEST(CheckRanges, WhereClauseErrors) {
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) = x(i - 1) where i in 1:N\n}",
               "the range of output index 'i' must start at 0, not 1");
  // A reduce index's bound may name another index (a triangle: a scan);
  // an output index's may not, nor an index's own.
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i, j) = x(j) where i in 0:j + 1, j in 0:N\n}",
               "the range of output index 'i' cannot depend on index 'j': an output has one "
               "shape");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) +=! x(k) where k in 0:k + 1, i in 0:N\n}",
               "the range of index 'k' cannot depend on itself");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) +=! x(k) where k in 0:x, i in 0:N\n}",
               "'x' is a tensor");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) +=! x(k) where k in 2:2, i in 0:N\n}",
               "empty range for index 'k': [2, 2)");
  EXPECT_ERROR("def f(float(N) x) -> (float(N) y) {\n  y(i) = x(i) where i in 0:M\n}",
               "size mismatch: the where clause gives 'i' the range [0, M) but it indexes "
               "dimension 0 of 'y', of size N");
}

TEST(CheckCalls, Errors) {
  const char* add = "def add(float(N) a, float(N) b) -> (c) {\n  c(i) = a(i) + b(i)\n}\n";
  EXPECT_ERROR(std::string(add) + "def f(float(N) x) -> (y, z) {\n  (y, z) = add(x, x)\n}",
               "'add' returns 1 result, 2 taken");
  EXPECT_ERROR(std::string(add) + "def f(float(N, N) x) -> (y) {\n  y = add(x, x)\n}",
               "rank mismatch: argument 'x' has rank 2 but parameter 'a' of 'add' has rank 1");
  EXPECT_ERROR(std::string(add) + "def f(float64(N) x) -> (y) {\n  y = add(x, x)\n}",
               "type mismatch: argument 'x' is float64 but parameter 'a' of 'add' is float32");
  EXPECT_ERROR(std::string(add) + "def f(float(N) x) -> (y) {\n  y = add(x, q)\n}",
               "unknown name 'q'");
  EXPECT_ERROR(std::string(add) + "def f(float(N) x) -> (y) {\n  y = add(x, N)\n}",
               "argument 'N' of 'add' must be a tensor");
  EXPECT_ERROR(
      "def g(float(3) a) -> (b) {\n  b(i) = a(i)\n}\n"
      "def f(float(N) x) -> (y) {\n  y = g(x)\n}",
      "dimension 0 of 'x' has size N but 'g' needs 3");
  EXPECT_ERROR(
      "def g(float(N) a) -> (b) {\n  b(i, j) = a(i) where j in 0:M\n}\n"
      "def f(float(N) x) -> (y) {\n  y = g(x)\n}",
      "size parameter 'M' of 'g' is not bound by any argument");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y = f(x)\n}", "recursive call of 'f'");
  EXPECT_ERROR(std::string(add) + "def f(float(N) x) -> (y) {\n  y(i) = add(x, x)\n}",
               "must be a statement of its own");
  EXPECT_ERROR(std::string(add) + "def f(float(N) x) -> (y) {\n  (y, y) = add(x, x)\n}",
               "it appears twice among the results");
}

TEST(CheckCalls, ErrorsInACalleeAreReportedOnce) {
  std::string text = check_error(R"(def g(float(N) a) -> (b) {
  b(i) = a(i) * unknown
}
def f(float(N) x) -> (y, z) {
  y = g(x)
  z = g(y)
})");
  size_t first = text.find("unknown name 'unknown'");
  EXPECT_NE(first, std::string::npos);
  EXPECT_EQ(text.find("error", text.find("error") + 1), std::string::npos) << text;
}

TEST(CheckCalls, InlinedWithBoundSizes) {
  ir::Module m = check_ok(R"(def pair(float(N, D) a, float(D) w) -> (s, t) {
  s(n) +=! a(n, d) * w(d)
  t(n) = s(n) * 2
}
def f(float(B, 16) x, float(16) w) -> (u, v) {
  (u, v) = pair(x, w)
})");
  ASSERT_EQ(m.functions.size(), 2u);
  const ir::Function& f = m.functions[1];
  ASSERT_EQ(f.body.size(), 2u);
  EXPECT_EQ(f.body[0].compute.result->name, "u");
  EXPECT_EQ(f.body[1].compute.result->name, "v");
  EXPECT_EQ(f.body[0].compute.reduce.at(0).hi, ir::SizeExpr(16));
  EXPECT_EQ(f.body[0].source, "s(n) +=! a(n, d) * w(d)");
  EXPECT_EQ(f.size_params, (std::vector<std::string>{"B"}));
}

TEST(CheckCalls, DeepCallChainsAreErrors) {
  std::string text = "def g0(float(N) x) -> (y) {\n  y(i) = x(i) * 2\n}\n";
  for (int k = 1; k < 70; ++k)
    text += "def g" + std::to_string(k) + "(float(N) x) -> (y) {\n  y = g" + std::to_string(k - 1) +
            "(x)\n}\n";
  std::string errors = check_error(text);
  // Reported once, at the call that would exceed the limit (not inside inlined code).
  EXPECT_NE(errors.find(":197:7: error: calls nest too deeply (more than 64 levels"),
            std::string::npos)
      << errors;
  EXPECT_EQ(errors.find("error", errors.find("error") + 1), std::string::npos) << errors;
}

TEST(CheckLoops, Structure) {
  ir::Module m = check_ok(R"(def f(float(N) x) -> (y, t) {
  y(i) = x(i)
  for it in 2:5 {
    t(i) = y(i) * float32(it)
    y(i) = t(i) + 1
    unused(i) = t(i)
  }
})");
  ASSERT_EQ(m.functions.size(), 1u);
  const ir::Function& f = m.functions[0];
  ASSERT_EQ(f.body.size(), 2u);
  ASSERT_EQ(f.body[1].kind, ir::StmtKind::Loop);
  const ir::Loop& loop = *f.body[1].loop;
  EXPECT_EQ(loop.var, "it");
  EXPECT_EQ(loop.trip, 3);
  EXPECT_EQ(f.body[1].source, "for it in 2:5");
  ASSERT_EQ(loop.carried.size(), 2u);  // y carried, t live-out; unused is dropped
  EXPECT_EQ(loop.carried[0].init, f.body[0].compute.result);
  EXPECT_EQ(loop.carried[0].next, loop.body[1].compute.result);
  EXPECT_EQ(loop.carried[1].init, nullptr);
  EXPECT_EQ(loop.carried[1].next, loop.body[0].compute.result);
  EXPECT_EQ(f.outputs[0], loop.carried[0].result);
  EXPECT_EQ(f.outputs[1], loop.carried[1].result);
  // The source loop variable counts from 2; the IR's from 0.
  EXPECT_NE(ir::print(loop.body[0].compute.body).find("add(it, 2:int64)"), std::string::npos);
}

TEST(CheckLoops, Errors) {
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) = x(i)\n  for it in 3:3 {\n  }\n}",
               "empty range for loop variable 'it': [3, 3)");
  EXPECT_ERROR("def f(float(N) x) -> (y) {\n  y(i) = x(i)\n  for it in 0:1.5 {\n  }\n}",
               "'1.5' is not an integer");
  EXPECT_ERROR(
      "def f(float(N) x) -> (y) {\n  y(i) = x(i)\n  for it in 0:3 {\n"
      "    for jt in 0:it {\n    }\n  }\n}",
      "'it' is a loop variable");
  EXPECT_ERROR(
      "def f(float(N) x) -> (y) {\n  for it in 0:3 {\n    t(i) = x(i)\n  }\n"
      "  y(i) = x(i) + tmp(i)\n}",
      "unknown name 'tmp'");
}

TEST(CheckLoops, LoopVariablesInIndices) {
  ir::Module m = check_ok(R"(def f(float(3, N) h) -> (y) {
  y(i) = h(0, i)
  for it in 0:3 {
    y(i) = y(i) + h(it, i)
  }
})");
  EXPECT_EQ(m.functions.size(), 1u);
  EXPECT_ERROR(R"(def f(float(3, N) h) -> (y) {
  y(i) = h(0, i)
  for it in 0:4 {
    y(i) = y(i) + h(it, i)
  }
})",
               "index 'it' of 'h' reads out of bounds: it reaches 3 but 'h' has size 3");
}

TEST(CheckLoops, IndicesAndInlinedLoopsDoNotCaptureLoopVariables) {
  // The callee's loop variable and indices reuse the caller's loop variable
  // name; the IR renames them so that none shadows another.
  ir::Module m = check_ok(R"(def g(float(N) a) -> (b) {
  b(it) = a(it)
  for it in 0:2 {
    b(i) = b(i) * 2
  }
}
def f(float(N) x) -> (y) {
  y(i) = x(i)
  for it in 0:3 {
    y = g(y)
  }
})");
  ASSERT_EQ(m.functions.size(), 2u);
  const ir::Loop& outer = *m.functions[1].body.at(1).loop;
  EXPECT_EQ(outer.var, "it");
  EXPECT_EQ(outer.body.at(0).compute.out.at(0).index, "it_1");
  EXPECT_EQ(outer.body.at(1).loop->var, "it_1");
}

}  // namespace
}  // namespace tenet::lang
