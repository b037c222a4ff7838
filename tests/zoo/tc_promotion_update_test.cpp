// TC's integer promotion at the statement level (issue 15): an integer right
// side assigned or accumulated onto a float tensor (`y(i) += i`, an int32
// tensor summed into a declared float output) is converted to the tensor's
// type. models/zoo/tc_promotion_update.tn runs in the interpreter and
// compiled against values computed here; its gradient is in the zoo table.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver/driver.h"
#include "ir/interp.h"
#include "lang/check.h"
#include "support/diagnostics.h"
#include "support/tensor.h"
#include "tests/support/golden.h"

namespace tenet {
namespace {

TEST(TcPromotionUpdate, IntegerRightSidesTakeTheFloatTargetsType) {
  const int64_t n = 3, d = 4;
  const std::string path = tenet::testing::source_path("models/zoo/tc_promotion_update.tn");
  ir::Module m = lang::compile_source(SourceFile::read(path));
  const ir::Function& f = m.functions.at(0);
  EXPECT_EQ(f.outputs.at(0)->type, ElemType::F32);
  EXPECT_EQ(f.outputs.at(1)->type, ElemType::F32);

  Tensor x = random_tensor(ElemType::F32, {n, d}, 7);
  Tensor count(ElemType::I32, {n, d});
  for (int64_t k = 0; k < n * d; ++k) count.set(k, double(k % 5 - 2));
  std::vector<double> y, total;
  for (int64_t i = 0; i < n; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < d; ++j) {
      const double xv = x.get(i * d + j), c = count.get(i * d + j);
      y.push_back(xv * xv + double(j) + c * double(n));
      sum += c;
    }
    total.push_back((sum + double(i)) * x.get(i * d));
  }

  std::vector<Tensor> interpreted = ir::interpret(f, {x, count});
  driver::optimise(m);
  std::vector<Tensor> compiled = driver::jit_compile(m, f.name).run({x, count});
  for (const std::vector<Tensor>* out : {&interpreted, &compiled}) {
    ASSERT_EQ(out->size(), 2u);
    ASSERT_EQ((*out)[0].numel(), n * d);
    ASSERT_EQ((*out)[1].numel(), n);
    for (int64_t k = 0; k < n * d; ++k) EXPECT_NEAR((*out)[0].get(k), y[size_t(k)], 1e-5);
    for (int64_t k = 0; k < n; ++k) EXPECT_NEAR((*out)[1].get(k), total[size_t(k)], 1e-5);
  }
}

TEST(TcPromotionUpdate, AFloatOntoAnIntegerTensorIsStillAnError) {
  // Narrowing is not TC's promotion: a float right side onto an integer
  // tensor keeps its error (a cast says what is meant).
  try {
    lang::compile_source(SourceFile("t.tn", R"(def f(float(N) x, int32(N) k) -> (y) {
  y(i) = k(i)
  y(i) += x(i)
})"));
    ADD_FAILURE() << "no error";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "t.tn:3:11: error: type mismatch: 'y' is int32 but the right side is float32"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tenet
