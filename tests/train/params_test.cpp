// The ParameterStore: naming rules, lookup, stable references, gradients,
// the printed table.
#include <gtest/gtest.h>

#include "tests/support/alloc/allocation_counter.h"
#include "tests/train/train_test_util.h"
#include "train/params.h"

namespace tenet::train {
namespace {

using testing::expect_error;

TEST(ParameterStore, AddsInOrderWithZeroGradients) {
  ParameterStore store;
  Parameter& w = store.add("conv1_w", {4, 1, 3, 3}, "kaiming_uniform(fan_in=9)");
  store.add("conv1.b", {4}, InitSpec::parse("zeros"));
  ASSERT_EQ(store.size(), 2u);
  EXPECT_EQ(store[0].name, "conv1_w");
  EXPECT_EQ(store[1].name, "conv1.b");
  EXPECT_EQ(&store.at("conv1_w"), &w);
  EXPECT_EQ(w.value.type(), ElemType::F32);
  EXPECT_EQ(w.grad.shape(), (std::vector<int64_t>{4, 1, 3, 3}));
  EXPECT_EQ(store.numel(), 40);
  EXPECT_EQ(store.find("nope"), nullptr);
  // References survive later additions.
  for (int i = 0; i < 100; ++i) store.add("p" + std::to_string(i), {1}, "zeros");
  EXPECT_EQ(&store.at("conv1_w"), &w);
}

TEST(ParameterStore, ZeroGradClearsEveryGradient) {
  ParameterStore store;
  store.add("a", {3}, "zeros");
  store.add("b", {2, 2}, "zeros");
  for (Parameter& p : store)
    for (int64_t i = 0; i < p.grad.numel(); ++i) p.grad.data<float>()[i] = 1.5f;
  store.zero_grad();
  for (const Parameter& p : store)
    for (int64_t i = 0; i < p.grad.numel(); ++i) EXPECT_EQ(p.grad.data<float>()[i], 0.0f);
}

TEST(ParameterStore, Describe) {
  ParameterStore store;
  store.add("conv1_w", {256, 1, 9, 9}, "kaiming_uniform(fan_in=81)");
  store.add("conv1_b", {256}, "zeros");
  EXPECT_EQ(store.describe(),
            "conv1_w [256,1,9,9] kaiming_uniform(fan_in=81) -> bound 0.272\n"
            "conv1_b [256] zeros -> = 0\n"
            "total: 20992 parameters\n");
}

TEST(ParameterStore, Errors) {
  ParameterStore store;
  store.add("w", {2}, "zeros");
  expect_error([&] { store.add("w", {3}, "zeros"); }, {"parameter 'w' is defined twice"});
  expect_error([&] { store.add("a/b", {3}, "zeros"); }, {"'a/b' is not an identifier"});
  expect_error([&] { store.add("1w", {3}, "zeros"); }, {"'1w' is not an identifier"});
  expect_error([&] { store.add("", {3}, "zeros"); }, {"'' is not an identifier"});
  expect_error([&] { store.add("v", {3, 0}, "zeros"); }, {"'v' has a non-positive dimension 0"});
  expect_error([&] { store.add("v", {3}, "zero"); }, {"unknown initialiser 'zero'"});
  expect_error([&] { store.at("x"); }, {"no parameter named 'x'"});
}

// The counter the "allocates nothing" tests rely on sees the library's allocations.
TEST(ParameterStore, AllocationCounterSeesLibraryAllocations) {
  ParameterStore store;
  tenet::testing::Counter counter(tenet::testing::Threads::all);
  store.add("a_name_longer_than_the_small_string_buffer", {3}, "zeros");
  const tenet::testing::Allocations a = counter.stop();
  EXPECT_GT(a.cxx, 0);
  if (tenet::testing::glibc_allocator()) {
    EXPECT_GT(a.c_other, 0);  // the tensor's storage
  }
}

TEST(ParameterStore, RefusesShapesBeyond64BitByteSizes) {
  ParameterStore store;
  EXPECT_EQ(testing::error_of([&] {
              store.add("big", {int64_t(1) << 30, int64_t(1) << 30, 2}, "zeros");
            }),
            "parameter 'big' of shape (1073741824, 1073741824, 2): 2305843009213693952 elements "
            "of 4 bytes overflow a 64-bit byte size");
  EXPECT_EQ(testing::error_of([&] {
              store.add("huge", {int64_t(1) << 32, int64_t(1) << 32}, "zeros");
            }),
            "parameter 'huge' of shape (4294967296, 4294967296): its element count overflows a "
            "64-bit integer");
  EXPECT_EQ(store.size(), 0u);
}

}  // namespace
}  // namespace tenet::train
