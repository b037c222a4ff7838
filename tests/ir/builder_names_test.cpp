// Value names from the builder are unique within a function, even when a
// requested name looks like a generated version ("b.1").
#include <gtest/gtest.h>

#include "ir/builder.h"

namespace tenet::ir {
namespace {

TEST(BuilderNames, VersionsNeverCollideWithRequestedNames) {
  FunctionBuilder fb("f");
  EXPECT_EQ(fb.new_value("b", ElemType::F32, {})->name, "b");
  EXPECT_EQ(fb.new_value("b", ElemType::F32, {})->name, "b.1");
  // "b.1" is taken by the second "b": asking for it gives a fresh name.
  std::string again = fb.new_value("b.1", ElemType::F32, {})->name;
  EXPECT_NE(again, "b.1");
  EXPECT_NE(again, "b");
  EXPECT_EQ(fb.new_value("b", ElemType::F32, {})->name, "b.2");
  // And the other order: a requested "c.1" makes the second "c" skip it.
  EXPECT_EQ(fb.new_value("c.1", ElemType::F32, {})->name, "c.1");
  EXPECT_EQ(fb.new_value("c", ElemType::F32, {})->name, "c");
  EXPECT_EQ(fb.new_value("c", ElemType::F32, {})->name, "c.2");
}

}  // namespace
}  // namespace tenet::ir
