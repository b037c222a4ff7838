// `where exists X(i, ...)` (TC): a read that only constrains range inference
// (and is bounds-checked) but is not part of the value.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/interp.h"
#include "lang/ast.h"
#include "lang/parser.h"
#include "tests/lang/check_util.h"

namespace tenet::lang {
namespace {

using tenet::testing::check_error;
using tenet::testing::check_ok;

TEST(WhereExists, GivesARangeWithoutAReadInTheValue) {
  ir::Module m = check_ok(R"(def f(float(N) x, float(K) w) -> (y) {
  y(i) +=! x?(i + k) where exists w(k), i in 0:N
})");
  ASSERT_EQ(m.functions.size(), 1u);
  const ir::Compute& c = m.functions[0].body.at(0).compute;
  ASSERT_EQ(c.reduce.size(), 1u);
  EXPECT_EQ(c.reduce[0].hi.str(), "K");  // from w, which the value does not read
  Tensor x = random_tensor(ElemType::F32, {5}, 1);
  Tensor w = random_tensor(ElemType::F32, {3}, 2);
  std::vector<Tensor> out = ir::interpret(m.functions[0], {x, w}, {}, {ElemType::F64});
  ASSERT_EQ(out.size(), 1u);
  for (int64_t i = 0; i < 5; ++i) {
    double want = 0;
    for (int64_t k = 0; k < 3; ++k) want += i + k < 5 ? x.get(i + k) : 0;
    EXPECT_NEAR(out[0].get(i), want, 1e-9);
  }
}

TEST(WhereExists, PrintsBackAndChecksItsRead) {
  SourceFile file("t.tn", "def f(float(N) x) -> (y) {\n  y(i) = x(i) where exists x(i)\n}\n");
  ast::File program = parse(file);
  std::string printed = ast::print(program);
  EXPECT_NE(printed.find("where exists x(i)"), std::string::npos) << printed;
  std::string text = check_error("def f(float(N) x) -> (y) {\n  y(i) = x(i) where exists q(i)\n}");
  EXPECT_NE(text.find("unknown name 'q'"), std::string::npos) << text;
  text = check_error("def f(float(N) x) -> (y) {\n  y(i) = x(i) where exists x(i + 1)\n}");
  EXPECT_NE(text.find("index 'i + 1' of 'x' reads out of bounds"), std::string::npos) << text;
}

}  // namespace
}  // namespace tenet::lang
