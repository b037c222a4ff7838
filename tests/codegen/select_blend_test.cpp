// Selects printed as tenet::select (both branches evaluated, no branch: the
// loop vectorises without GCC's if-conversion, which the JIT turns off) when
// evaluating the branch not taken is safe. A branch's read of the element the
// condition reads is: the condition reads it either way. The LLTM's
// candidate gate, ELU's select(g > 0, g, exp(g) - 1) of g = gates(b, 2 S + s)
// + bias(2 S + s), reads an element whose index is not provably in range
// from the declared sizes alone (G and S are independent), only because the
// condition reads it too. The zoo tests run the same code against the
// interpreter.
#include <gtest/gtest.h>

#include "driver/driver.h"
#include "tests/support/golden.h"

namespace tenet::codegen {
namespace {

std::string forward_source(const std::string& model, const std::string& fn) {
  driver::Request r;
  r.path = tenet::testing::source_path(model);
  r.functions.push_back({fn, std::nullopt});
  r.emit_code = true;
  return driver::compile(r).cpp->source;
}

TEST(SelectBlend, ABranchReadingWhatTheConditionReadsBlends) {
  const std::string code = forward_source("models/zoo/lltm.tn", "lltm");
  EXPECT_NE(code.find("tenet::select<float>(t_gates[t_b * t_gates_stride0 + (t_s + 2 * t_S)] +"),
            std::string::npos)
      << code;
  EXPECT_EQ(code.find(" ? "), std::string::npos) << code;
}

}  // namespace
}  // namespace tenet::codegen
