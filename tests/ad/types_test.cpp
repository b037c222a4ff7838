// AD and the element types of issue 15: float16 inputs are differentiated
// (their gradients stored in float16), bool and unsigned ones carry no
// gradient, and asking for one is an error naming the type.
#include <gtest/gtest.h>

#include "lang/check.h"
#include "tests/ad/ad_test_util.h"

namespace tenet::ad::testing {
namespace {

const char* kSource = R"(def f(float16(N) h, bool(N) m, uint8(N) q, float(N) x) -> (loss, mask) {
  loss +=! m(i) ? h(i) * x(i) : q(i) * x(i)
  mask(i) = m(i) && x(i) > 0
}
)";

std::string error_of(const GradRequest& req) {
  SourceFile file("types.tn", kSource);
  ir::Module m = lang::compile_source(file);
  try {
    differentiate(m, "f", req, &file);
  } catch (const CompileError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(AdTypes, EveryFloatInputByDefaultFloat16GradientsAreFloat16) {
  ir::Module m = lang::compile_source(SourceFile("types.tn", kSource));
  const ir::Function& fn = m.functions[0];
  EXPECT_EQ(resolve_wrt(fn, {{}, "loss", false}), (std::vector<std::string>{"h", "x"}));
  ir::Function grad = differentiate(fn, {{}, "loss", false});
  ASSERT_EQ(grad.outputs.size(), 4u);  // loss, mask, d_h, d_x
  EXPECT_EQ(grad.outputs[2]->type, ElemType::F16);
  EXPECT_EQ(grad.outputs[3]->type, ElemType::F32);
}

TEST(AdTypes, BoolAndUnsignedInputsCarryNoGradient) {
  EXPECT_EQ(error_of({{"m"}, "loss", false}),
            "types.tn:1:21: error: cannot differentiate with respect to bool input 'm' (bool[N])\n"
            "  def f(float16(N) h, bool(N) m, uint8(N) q, float(N) x) -> (loss, mask) {\n"
            "                      ^~~~~~~~~");
  EXPECT_EQ(error_of({{"q"}, "loss", false}),
            "types.tn:1:32: error: cannot differentiate with respect to integer input 'q' "
            "(uint8[N])\n"
            "  def f(float16(N) h, bool(N) m, uint8(N) q, float(N) x) -> (loss, mask) {\n"
            "                                 ^~~~~~~~~~");
}

TEST(AdTypes, BoolOutputHasNoGradient) {
  EXPECT_EQ(error_of({{"x"}, "mask", true}),
            "types.tn:3:3: error: cannot differentiate bool output 'mask' (bool[N])\n"
            "    mask(i) = m(i) && x(i) > 0\n"
            "    ^~~~~~~~~~~~~~~~~~~~~~~~~~");
  EXPECT_EQ(error_of({{"x"}, "", true, {"loss", "mask"}}),
            "types.tn:3:3: error: cannot differentiate bool output 'mask' (bool[N])\n"
            "    mask(i) = m(i) && x(i) > 0\n"
            "    ^~~~~~~~~~~~~~~~~~~~~~~~~~");
}

}  // namespace
}  // namespace tenet::ad::testing
