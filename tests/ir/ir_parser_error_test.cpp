// Malformed IR text: every error is a CompileError at the right place, never a crash.
#include <gtest/gtest.h>

#include "ir/ir_parser.h"
#include "ir/printer.h"
#include "support/error.h"
#include "tests/ir/ir_samples.h"

namespace tenet::ir {
namespace {

struct BadCase {
  const char* text;
  const char* where;    // "line:col"
  const char* message;  // a substring of the error
};

// Wraps a body in a function with sizes N, M and inputs %x: float32[N], %k: int64[N].
std::string in_function(const std::string& body) {
  return "func f[N, M](%x: float32[N], %k: int64[N]) {\n" + body + "}\n";
}

std::string error_of(const std::string& text) {
  try {
    parse_ir(SourceFile("bad.ir", text));
  } catch (const CompileError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(IrParserErrors, PointAtTheProblem) {
  const BadCase cases[] = {
      {"  %y[i]: float32[N] = %z[i]\n  return %y\n", "2:23", "%z is not defined"},
      {"  %y[i]: float32[N] = add(%x[i], 1:float64)\n  return %y\n", "2:23",
       "add of different types: float32 and float64"},
      {"  %y[i]: float32[N] = %x[i, i]\n  return %y\n", "2:23",
       "read of %x has 2 indices, but it has rank 1"},
      {"  %y[i]: float32[N] = %x[j]\n  return %y\n", "2:26",
       "'j' is neither an index of this statement nor a size parameter"},
      {"  %y[i]: float32[Q] = %x[i]\n  return %y\n", "2:18", "unknown size parameter 'Q'"},
      {"  %y[i]: float32[N] = %x[i]\n  %y[i]: float32[N] = %x[i]\n  return %y\n", "3:3",
       "%y is defined twice"},
      {"  %y[i, j]: float32[N, N] = %x[i*j]\n  return %y\n", "2:32", "not affine"},
      {"  %y[i]: float32[N] = %x[{add(i, 1:int64)}]\n  return %y\n", "2:27",
       "this computed index is affine: write it without braces"},
      {"  %y[i]: float32[N] = %x[{%x[i]}]\n  return %y\n", "2:27",
       "a computed index must be int64, not float32"},
      {"  %y[i]: float32[N] = %x[{%k[i]]\n  return %y\n", "2:32", "'}'"},
      {"  %y[i]: float32[N] = sqrt(%k[i])\n  return %y\n", "2:28",
       "sqrt takes a float, found int64"},
      {"  %y[i]: float32[N] = %k[i]\n  return %y\n", "2:23",
       "the body has type int64, the result is float32"},
      {"  %y[i]: float32[N] = frob(%x[i])\n  return %y\n", "2:23", "unknown operation 'frob'"},
      {"  %y[i]: float32[N] = %x[i]\n  return %y gradient of %y\n", "3:25",
       "expected an input after 'gradient of', found '%y'"},
      {"  %y[i]: float32[N] = add(%x[i])\n  return %y\n", "2:23", "add takes 2 arguments"},
      {"  %y[i]: int64[N] = add(%k[i], 1.5:int64)\n  return %y\n", "2:32",
       "constant 1.5 is not an integer"},
      // Found by fuzz_ir: a huge constant was converted to int64 (undefined).
      {"  %y[i]: int64[N] = add(%k[i], 7e71:int64)\n  return %y\n", "2:32",
       "constant 7e71 is out of the range of int64"},
      {"  %y[i]: float32[N] = select(%x[i], %x[i], %x[i])\n  return %y\n", "2:30",
       "select condition must be bool"},
      {"  %y[]: float32[] = sum [i in 0:N] init(%x) %x[i]\n  return %y\n", "2:41",
       "init %x is float32[N], the result is float32[]"},
      {"  %y[i]: float32[N] = sum [i in 0:N] %x[i]\n  return %y\n", "2:28",
       "index i is bound twice"},
      {"  %y[i]: float32[N] layout(0, 0) = %x[i]\n  return %y\n", "2:10",
       "layout is not a permutation"},
      {"  %y[i, j]: float32[N] = %x[i]\n  return %y\n", "2:13", "2 out indices for a rank 1"},
      {"  loop it in 0:3 {\n    %y[i]: float32[N] = %x[i]\n  }\n  return %y\n", "5:10",
       "output %y is not defined at the function's top level"},
      {"  loop it in 0:3 carry(%p = %x) {\n  }\n  return %x\n", "2:8",
       "carried tensor %p has no '= next %value' result"},
      {"  loop it in 0:N {\n  }\n  return %x\n", "2:14", "constant N > 0"},
      {"  loop it in 0:2 {\n    loop it in 0:2 {\n    }\n  }\n  return %x\n", "3:10",
       "loop variable it shadows"},
      {"  loop it in 0:2 carry(%p = %x) {\n    %q[i]: float32[N] = cast<float32>(%k[i])\n  } -> "
       "(%r = next %q, %s = next %q)\n  return %r\n",
       "4:23", "more 'next' results than carried tensors"},
      {"  loop it in 0:2 {\n    %q[i]: float32[N] = %x[i]\n  }\n  %y[i]: float32[N] = %q[i]\n  "
       "return %y\n",
       "5:23", "%q is not visible here"},
      {"  %y[i]: float32[N] = %x[i]\n", "3:1", "expected 'return' to end the function body"},
      {"  %y[i]: float32[N] = $x[i]\n  return %y\n", "2:23", "unexpected character '$'"},
      {"  attrs(a = \"unterminated)\n  return %x\n", "2:13", "unterminated string"},
      {"  attrs(saved = \"1\", saved = \"2\")\n  %y[i]: float32[N] = %x[i]\n  return %y\n", "2:22",
       "annotation saved is given twice"},
      {"  attrs(fusion = \"1\")\n  %y[i]: float32[N] = %x[i]\n  return %y\n", "2:9",
       "unknown annotation fusion"},
      {"  attrs(nest = [j])\n  %y[i]: float32[N] = %x[i]\n  return %y\n", "2:9",
       "nest must list leading out indices"},
      {"  attrs(scan = i)\n  %y[i]: float32[N] = %x[i]\n  return %y\n", "2:16",
       "scan must name an out index of a reduction over one index"},
      // A sum's lanes count its last reduce index from its start: no test on it.
      {"  attrs(lanes = 16)\n  %y[]: float32[] = sum [i in 0:N] select(lt(i, 5:int64), %x[i], "
       "0:float32)\n"
       "  return %y\n",
       "2:17", "lanes must be a power of two (at least 2) of a max, min or float32 sum"},
      {"  attrs(lanes = 16)\n  %y[]: int64[] = sum [i in 0:N] %k[i]\n  return %y\n", "2:17",
       "lanes must be"},  // an int64 sum
      {"  attrs(saved = \"1\"\n  return %x\n", "2:8", "attrs(...) is not closed"},
      {"  %y[i]: float32[N] = %x?(i)\n  return %y\n", "2:26", "expected '['"},
      {"  %y[i]: float32[N] = mul(%x[i], 2)\n  return %y\n", "2:35", "expected ':'"},
      {"  %y[i]: float32[N] = %x[i / 0]\n  return %y\n", "2:30", "positive constant"},
      {"  %y[i]: float32[N] = %x[i + 99999999999999999999]\n  return %y\n", "2:30",
       "fits in 64 bits"},
      // GEMM plans are checked against their statement.
      {"  attrs(gemm = always %y[i : -] = %x[i : -] * %x[- : -])\n  %y[i]: float32[N] = %x[i]\n"
       "  return %y\n",
       "2:16", "a GEMM plan on a statement that is no sum"},
      {"  %a[i, j]: float32[N, M] = 1:float32\n  attrs(gemm = always %c[i : j] = %b[i : k] * "
       "transposed(%a)[k : j])\n  %c[i, j]: float32[N, N] = sum [k in 0:M] mul(%a[i, k], %a[j, "
       "k])\n  return %c\n",
       "3:16", "the GEMM's factors are %a and %a"},
      {"  %a[i, j]: float32[N, M] = 1:float32\n  attrs(gemm = always %c[i : j] = %a[i : k] * %a[j "
       ": j])\n  %c[i, j]: float32[N, N] = sum [k in 0:M] mul(%a[i, k], %a[j, k])\n  return %c\n",
       "3:16", "the GEMM's matrices do not agree"},
      {"  %a[i, j]: float32[N, M] = 1:float32\n  attrs(gemm = always %c[i : j] = %a[i : q] * %a[q "
       ": j])\n  %c[i, j]: float32[N, N] = sum [k in 0:M] mul(%a[i, k], %a[j, k])\n  return %c\n",
       "3:35", "q is not a reduce index"},
      {"  %a[i, j]: float32[N, M] = 1:float32\n  attrs(gemm = if N*N >= 65536 %c[i : j] = %a[i : "
       "k] * %a[k : j])\n  %c[i, j]: float32[N, N] = sum [k in 0:M] mul(%a[i, k], %a[j, k])\n  "
       "return %c\n",
       "3:16", "the GEMM's work is"},
  };
  for (const BadCase& c : cases) {
    std::string text = in_function(c.text);
    SCOPED_TRACE(text);
    std::string err = error_of(text);
    EXPECT_NE(err.find(std::string("bad.ir:") + c.where + ": error: "), std::string::npos) << err;
    EXPECT_NE(err.find(c.message), std::string::npos) << err;
  }
}

TEST(IrParserErrors, FunctionLevelProblems) {
  EXPECT_NE(error_of("func f() {\n  return\n}\nfunc f() {\n  return\n}\n")
                .find("bad.ir:4:6: error: function 'f' is defined twice"),
            std::string::npos);
  EXPECT_NE(error_of("func f[N, N]() {\n  return\n}\n").find("size parameter N is listed twice"),
            std::string::npos);
  EXPECT_NE(error_of("func f[N](%x: float32[N]) {\n  return %y\n}\n")
                .find("output %y is not defined at the function's top level"),
            std::string::npos);
  EXPECT_NE(error_of("func f[N](%x: float32[N]) {\n  %y[i]: float32[N] = %x[i]\n  return %y as v, "
                     "%x as v\n}\n")
                .find("bad.ir:3:25: error: output name v is used twice"),
            std::string::npos);
  EXPECT_NE(
      error_of("func f[N](%x: float32[N]) {\n  %y[i]: int32[N] = 1:int32\n  return %y as x\n}\n")
          .find("bad.ir:3:16: error: output name x is the name of an input of another type or "
                "shape"),
      std::string::npos);
  EXPECT_NE(error_of("fun f() {}").find("bad.ir:1:1: error: expected 'func'"), std::string::npos);
  std::string deep = "func f(%x: float32[]) {\n  %y[]: float32[] = ";
  for (int i = 0; i < 5000; ++i) deep += "neg(";
  EXPECT_NE(error_of(deep).find("nested too deeply"), std::string::npos);
  std::string deep_size = "func f[N](%x: float32[";
  for (int i = 0; i < 5000; ++i) deep_size += "(";
  EXPECT_NE(error_of(deep_size).find("nested too deeply"), std::string::npos);
}

// Parses text that may be malformed: a CompileError is fine, anything else is
// a bug. What parses must print stably.
void parse_or_reject(const std::string& text) {
  try {
    Module m = parse_ir(SourceFile("fuzz.ir", text));
    std::string printed = print(m);
    EXPECT_EQ(print(parse_ir(SourceFile("fuzz2.ir", printed))), printed) << text;
  } catch (const CompileError&) {
  } catch (const std::exception& e) {
    ADD_FAILURE() << "unexpected exception: " << e.what() << "\non input:\n" << text;
  }
}

// A cheap in-tree fuzz: prefixes and one-character edits of printed IR.
TEST(IrParserErrors, TruncatedAndMutatedTextNeverCrashes) {
  const std::string text = print(samples::all());
  for (size_t n = 0; n <= text.size(); n += 151) parse_or_reject(text.substr(0, n));
  const std::string replacements[] = {"%", "(", ")", "]", "-", "0", "x", "\n", "#", ",", "?", ""};
  for (size_t i = 0; i < 48; ++i) {
    std::string mutated = text;
    mutated.replace((i * 7919) % text.size(), 1, replacements[i % 12]);
    parse_or_reject(mutated);
  }
}

}  // namespace
}  // namespace tenet::ir
