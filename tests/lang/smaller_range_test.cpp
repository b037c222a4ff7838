// TC's rule for an index whose plain uses have different sizes: it takes the
// smaller range (min of the sizes), unless a target dimension fixes it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ir/interp.h"
#include "tests/lang/check_util.h"

namespace tenet::lang {
namespace {

TEST(SmallerRange, DifferentSizesGiveTheMinimum) {
  ir::Module m =
      tenet::testing::check_ok("def f(float(N) x, float(M) y) -> (z) {\n  z(i) = x(i) + y(i)\n}\n");
  ASSERT_EQ(m.functions.size(), 1u);
  EXPECT_EQ(m.functions[0].outputs[0]->shape[0].str(), "min(M, N)");
  for (int64_t n : {5, 2}) {
    Tensor x = random_tensor(ElemType::F32, {n}, 1);
    Tensor y = random_tensor(ElemType::F32, {3}, 2);
    std::vector<Tensor> out = ir::interpret(m.functions[0], {x, y}, {}, {ElemType::F64});
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].shape(), (std::vector<int64_t>{std::min<int64_t>(n, 3)}));
    for (int64_t i = 0; i < out[0].numel(); ++i)
      EXPECT_NEAR(out[0].get(i), x.get(i) + y.get(i), 1e-6);
  }
}

TEST(SmallerRange, ATargetDimensionStillMustAgree) {
  std::string text = tenet::testing::check_error(
      "def f(float(N) x, float(M) y) -> (z) {\n  z(i) = x(i)\n  z(i) += y(i)\n}\n");
  EXPECT_NE(text.find("size mismatch for index 'i': dimension 0 of 'z' has size N but dimension "
                      "0 of 'y' has size M"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace tenet::lang
