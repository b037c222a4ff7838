// Bad gradient requests: each a CompileError with the exact text, rendered at
// the function's or the value's span when the source file is known.
#include <gtest/gtest.h>

#include "lang/check.h"
#include "tests/ad/ad_test_util.h"

namespace tenet::ad::testing {
namespace {

const char* kSource = R"(def f(float(N, K) x, int32(N) labels, float w) -> (y, total) {
  y(n, k) = x(n, k) * w
  total +=! y(n, k)
}
def g(int32(N) k) -> (z) {
  z(i) = k(i) * 2
}
def h(float(N) x) -> (sum, squares) {
  sum +=! x(n)
  squares +=! x(n) * x(n)
}
)";

// The error text of differentiating `fn` with `req`, with and without the file.
std::string error_of(const std::string& fn, const GradRequest& req, bool with_file = true) {
  SourceFile file("model.tn", kSource);
  ir::Module m = lang::compile_source(file);
  try {
    differentiate(m, fn, req, with_file ? &file : nullptr);
  } catch (const CompileError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(AdErrors, UnknownFunction) {
  EXPECT_EQ(error_of("q", {}),
            "model.tn: error: no function named 'q' to differentiate (functions: f, g, h)");
  EXPECT_EQ(error_of("q", {}, false),
            "error: no function named 'q' to differentiate (functions: f, g, h)");
}

TEST(AdErrors, NonScalarOutputWithoutCotangents) {
  EXPECT_EQ(error_of("f", {{}, "y", false}),
            "model.tn:2:3: error: cannot differentiate non-scalar output 'y' (float32[N, K]) "
            "without cotangents: reduce it to a scalar, or ask for vector-Jacobian products\n"
            "    y(n, k) = x(n, k) * w\n"
            "    ^~~~~~~~~~~~~~~~~~~~~");
}

// Without a name, the only float scalar among several outputs (f's total);
// with none or two (h's), the request is ambiguous.
TEST(AdErrors, SeveralOutputsAndNoneNamed) {
  SourceFile file("model.tn", kSource);
  ir::Module m = lang::compile_source(file);
  EXPECT_EQ(resolve_outputs(*m.find("f"), {{"x"}, "", false}), std::vector<std::string>{"total"});
  EXPECT_EQ(error_of("h", {}, false),
            "error: function 'h' has 2 outputs (sum, squares): name the one to differentiate, or "
            "ask for vector-Jacobian products");
}

TEST(AdErrors, IntegerInput) {
  EXPECT_EQ(error_of("f", {{"x", "labels"}, "total", false}),
            "model.tn:1:22: error: cannot differentiate with respect to integer input 'labels' "
            "(int32[N])\n"
            "  def f(float(N, K) x, int32(N) labels, float w) -> (y, total) {\n"
            "                       ^~~~~~~~~~~~~~~");
}

TEST(AdErrors, UnknownInputAndOutput) {
  EXPECT_EQ(error_of("f", {{"v"}, "total", false}, false),
            "error: function 'f' has no input named 'v' (inputs: x, labels, w)");
  EXPECT_EQ(error_of("f", {{}, "loss", false}, false),
            "error: function 'f' has no output named 'loss' (outputs: y, total)");
}

TEST(AdErrors, InputNamedTwice) {
  EXPECT_EQ(error_of("f", {{"w", "w"}, "total", false}, false),
            "error: input 'w' is named twice in the gradient request");
}

// GradRequest::outputs: each named output must exist, be float, and be named
// once; several only with vjp; not together with `output`.
TEST(AdErrors, OutputList) {
  GradRequest req{{}, "", true, {"y", "loss"}};
  EXPECT_EQ(error_of("f", req, false),
            "error: function 'f' has no output named 'loss' (outputs: y, total)");
  req.outputs = {"total", "y", "total"};
  EXPECT_EQ(error_of("f", req),
            "model.tn:3:3: error: output 'total' is named twice in the gradient request\n"
            "    total +=! y(n, k)\n"
            "    ^~~~~~~~~~~~~~~~~");
  EXPECT_EQ(error_of("g", {{}, "", true, {"z"}}, false),
            "error: function 'g' has no float inputs to differentiate");
  req.outputs = {"y"};
  req.output = "y";
  EXPECT_EQ(error_of("f", req, false),
            "error: the gradient request of 'f' names both an output ('y') and a list of "
            "outputs: give one of them");
  EXPECT_EQ(error_of("h", {{}, "", false, {"sum", "squares"}}, false),
            "error: a gradient of 'h' differentiates one scalar output, but 2 are named: ask "
            "for vector-Jacobian products to differentiate several");
  SourceFile file("model.tn", kSource);
  ir::Module m = lang::compile_source(file);
  EXPECT_EQ(resolve_outputs(*m.find("h"), {{}, "", true, {"squares", "sum"}}),
            (std::vector<std::string>{"sum", "squares"}));
  EXPECT_EQ(resolve_outputs(*m.find("h"), {{}, "", false, {"squares"}}),
            std::vector<std::string>{"squares"});
}

TEST(AdErrors, NothingToDifferentiate) {
  EXPECT_EQ(error_of("g", {}, false), "error: function 'g' has no float inputs to differentiate");
  EXPECT_EQ(error_of("g", {{}, "", true}, false),
            "error: function 'g' has no float inputs to differentiate");
}

}  // namespace
}  // namespace tenet::ad::testing
