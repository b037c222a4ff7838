// The element types bool, uint8..uint64 and float16 (issue 15): the zoo
// programs models/zoo/tc_bool.tn, tc_unsigned.tn and tc_half.tn run in the
// interpreter against values computed here by hand (plain C++ loops, the
// NumPy formula in C++'s types), and compiled against the interpreter, bit
// for bit. Gradients: the same programs in the zoo table.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ad/grad.h"
#include "driver/driver.h"
#include "ir/interp.h"
#include "lang/check.h"
#include "runtime/tenet_runtime.h"
#include "support/tensor.h"
#include "tests/zoo/zoo_util.h"

namespace tenet {
namespace {

// Runs function `fn` of `module` in the interpreter and compiled; the two
// must agree byte for byte (the same operations in the same order).
std::vector<Tensor> run_both(const ir::Module& module, const std::string& fn,
                             const std::vector<Tensor>& inputs) {
  const ir::Function* f = module.find(fn);
  EXPECT_NE(f, nullptr) << fn;
  if (!f) return {};
  std::vector<Tensor> interpreted = ir::interpret(*f, inputs);
  ir::Module m;
  for (const ir::Function& function : module.functions) m.functions.push_back(function.clone());
  driver::optimise(m);
  std::vector<Tensor> compiled = driver::jit_compile(m, fn).run(inputs);
  EXPECT_EQ(compiled.size(), interpreted.size());
  for (size_t i = 0; i < compiled.size() && i < interpreted.size(); ++i) {
    EXPECT_EQ(compiled[i].type(), interpreted[i].type()) << "output " << i;
    EXPECT_EQ(compiled[i].shape(), interpreted[i].shape()) << "output " << i;
    if (compiled[i].nbytes() != interpreted[i].nbytes()) continue;
    EXPECT_EQ(std::memcmp(compiled[i].raw(), interpreted[i].raw(), compiled[i].nbytes()), 0)
        << "output " << i << ": compiled " << compiled[i].describe()
        << " differs from the interpreter's";
  }
  return interpreted;
}

template <typename T>
void expect_exact(const Tensor& t, const std::vector<T>& want) {
  ASSERT_EQ(t.numel(), int64_t(want.size()));
  for (size_t k = 0; k < want.size(); ++k)
    EXPECT_EQ(t.data<T>()[k], want[k]) << t.describe() << " entry " << k;
}

TEST(TcBool, MaskComparisonsAndBoolArithmetic) {
  const ir::Module& m = zoo::zoo_module("tc_bool");
  const int64_t n = 3, d = 5;
  Tensor x = random_tensor(ElemType::F32, {n, d}, 11);
  Tensor keep(ElemType::Bool, {n, d});
  for (int64_t k = 0; k < n * d; ++k) keep.data<bool>()[k] = k % 3 != 1;
  std::vector<Tensor> out = run_both(m, "tc_bool", {x, keep});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].type(), ElemType::F32);
  EXPECT_EQ(out[1].type(), ElemType::I32);
  std::vector<float> y;
  std::vector<int32_t> active(size_t(n), 0);
  for (int64_t k = 0; k < n * d; ++k) {
    const float v = x.data<float>()[k];
    const bool kept = keep.data<bool>()[k], on = v > 0 && kept;
    y.push_back(on ? v : 0.1f * v + float(kept) * v * v);
    active[size_t(k / d)] += on;
  }
  expect_exact(out[0], y);
  expect_exact(out[1], active);
}

TEST(TcUnsigned, WraparoundPromotionAndCasts) {
  const ir::Module& m = zoo::zoo_module("tc_unsigned");
  const int64_t n = 4, c = 3;
  Tensor x = random_tensor(ElemType::F32, {n, c}, 12);
  Tensor code(ElemType::U8, {n, c}), zero(ElemType::U16, {c}), scale(ElemType::U32, {c});
  Tensor id(ElemType::U64, {n});
  for (int64_t k = 0; k < n * c; ++k) code.data<uint8_t>()[k] = uint8_t(37 * k + 200);
  for (int64_t k = 0; k < c; ++k) zero.data<uint16_t>()[k] = uint16_t(100 + k);
  for (int64_t k = 0; k < c; ++k) scale.data<uint32_t>()[k] = uint32_t(k == 0 ? 4294967295u : k);
  const uint64_t ids[] = {0, 4, 9, uint64_t(1) << 63};
  for (int64_t k = 0; k < n; ++k) id.data<uint64_t>()[k] = ids[k];
  std::vector<Tensor> out = run_both(m, "tc_unsigned", {x, code, zero, scale, id});
  ASSERT_EQ(out.size(), 4u);
  std::vector<float> y;
  std::vector<uint8_t> sum8;
  std::vector<uint64_t> down, ratio;
  for (int64_t i = 0; i < n; ++i) {
    uint8_t s = 0;
    for (int64_t j = 0; j < c; ++j) {
      const uint8_t q = code.data<uint8_t>()[i * c + j];
      // scale + 1 wraps to 0 for 2^32 - 1: x * q / 0 is an infinity (or NaN).
      const uint32_t divisor = scale.data<uint32_t>()[j] + 1u;
      y.push_back(x.data<float>()[i * c + j] *
                  float(int32_t(q) - int32_t(zero.data<uint16_t>()[j])) / float(divisor));
      s = uint8_t(s + uint8_t(q * 100));
    }
    sum8.push_back(s);
    const uint64_t dn = ids[i] - 5;
    down.push_back(dn);
    ratio.push_back(dn / 3 + dn % 3 + (dn > 10));
  }
  expect_exact(out[1], sum8);
  expect_exact(out[2], down);
  expect_exact(out[3], ratio);
  ASSERT_EQ(out[0].numel(), int64_t(y.size()));
  for (size_t k = 0; k < y.size(); ++k) {
    const float got = out[0].data<float>()[k];
    if (std::isnan(y[k]))
      EXPECT_TRUE(std::isnan(got)) << k;
    else
      EXPECT_EQ(got, y[k]) << k;
  }
}

TEST(TcHalf, StoredAsHalfComputedInFloat) {
  const ir::Module& m = zoo::zoo_module("tc_half");
  const int64_t n = 3, in = 40, o = 2;
  Tensor x = random_tensor(ElemType::F16, {n, in}, 13);
  Tensor w = random_tensor(ElemType::F16, {in, o}, 14);
  Tensor b = random_tensor(ElemType::F32, {o}, 15);
  std::vector<Tensor> out = run_both(m, "tc_half", {x, w, b});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type(), ElemType::F16);
  std::vector<uint16_t> y;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < o; ++j) {
      float z = 0;  // float32 products and sums, in index order
      for (int64_t k = 0; k < in; ++k)
        z += half_to_float(x.data<uint16_t>()[i * in + k]) *
             half_to_float(w.data<uint16_t>()[k * o + j]);
      const float h = half_to_float(float_to_half(z + b.data<float>()[j]));
      y.push_back(float_to_half(std::fmax(h, 0.0f)));
    }
  }
  expect_exact(out[0], y);
}

TEST(TcHalf, GradientsOfHalfInputsAreHalf) {
  const ir::Module& m = zoo::zoo_module("tc_half");
  ir::Function grad = ad::differentiate(*m.find("tc_half"), {{}, "", true});
  std::vector<std::string> types;
  for (const ir::ValuePtr& v : grad.outputs) types.push_back(std::string(type_name(v->type)));
  // y, then d_x, d_w (float16 like x and w) and d_b (float32).
  EXPECT_EQ(types, (std::vector<std::string>{"float16", "float16", "float16", "float32"}));
}

TEST(TcUnsigned, Uint64BeyondInt64) {
  // Division, remainder, order and float conversion of uint64 values from
  // 2^63 on, where an int64 reading would be negative.
  ir::Module m = lang::compile_source(
      SourceFile("u.tn", R"(def f(uint64(N) a, uint64(N) b) -> (q, r, lt, g, back) {
  q(i) = a(i) / b(i)
  r(i) = a(i) % b(i)
  lt(i) = a(i) < b(i)
  g(i) = float64(a(i))
  back(i) = uint64(g(i) * 0.5)
})"));
  Tensor a(ElemType::U64, {3}), b(ElemType::U64, {3});
  const uint64_t as[] = {~uint64_t(0), uint64_t(1) << 63, 7}, bs[] = {3, ~uint64_t(0), 1ull << 62};
  for (int k = 0; k < 3; ++k) a.data<uint64_t>()[k] = as[k], b.data<uint64_t>()[k] = bs[k];
  std::vector<Tensor> out = run_both(m, "f", {a, b});
  ASSERT_EQ(out.size(), 5u);
  std::vector<uint64_t> q, r, back;
  std::vector<bool> lt;
  for (int k = 0; k < 3; ++k) {
    q.push_back(as[k] / bs[k]);
    r.push_back(as[k] % bs[k]);
    back.push_back(uint64_t(double(as[k]) * 0.5));
    EXPECT_EQ(out[2].data<bool>()[k], as[k] < bs[k]) << k;
    EXPECT_EQ(out[3].data<double>()[k], double(as[k])) << k;
  }
  expect_exact(out[0], q);
  expect_exact(out[1], r);
  expect_exact(out[4], back);
}

}  // namespace
}  // namespace tenet
