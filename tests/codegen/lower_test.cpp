// The lowered form of GEMM statements (lower/gemm.h), printed: what a
// backend receives, before any C++ text. The JIT tests check that the code
// printed from it matches the interpreter.
#include <gtest/gtest.h>

#include "driver/driver.h"
#include "ir/ir_parser.h"
#include "lower/lowered.h"
#include "passes/pipeline.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/support/golden.h"

namespace tenet::codegen::testing {
namespace {

// 520 channels: a window of 4680 terms, too wide for the convolution library
// (passes::kMaxLibraryConvWindow), so a GEMM.
const char* const kConv = R"(
def conv_stride2(float(B, 520, 34, 34) x, float(32, 520, 3, 3) w) -> (y) {
  y(b, o, i, j) +=! x(b, c, 2*i + ki, 2*j + kj) * w(o, c, ki, kj)
}
)";

ir::Module optimized(const char* source) {
  ir::Module m = compile_tn(source);
  driver::optimise(m);
  return m;
}

TEST(LowerGemms, PacksTheStridedFactor) {
  ir::Module m = optimized(kConv);
  const lower::LoweredFunction lowered = lower::lower(m.functions.at(0), 0);
  ASSERT_EQ(lowered.gemms.size(), 1u);
  const lower::GemmLowering& g = lowered.gemms.begin()->second;
  EXPECT_EQ(g.chunk, nullptr);
  ASSERT_NE(g.a_buffer, nullptr);  // im2col of x
  EXPECT_EQ(g.a_buffer->name, "x_packed");
  EXPECT_EQ(g.b_buffer, nullptr);  // w in place, transposed
  ASSERT_NE(g.c_buffer, nullptr);  // copied into y after the GEMM
  EXPECT_EQ(g.before.size(), 1u);
  EXPECT_EQ(g.after.size(), 1u);
  tenet::testing::expect_golden("lower/conv_stride2.txt", lower::print(lowered));
}

TEST(LowerGemms, ChunksWhenTheBuffersExceedTheBudget) {
  ir::Module m = optimized(kConv);
  const lower::LoweredFunction lowered = lower::lower(m.functions.at(0), 64 << 10);
  ASSERT_EQ(lowered.gemms.size(), 1u);
  const lower::GemmLowering& g = lowered.gemms.begin()->second;
  ASSERT_NE(g.chunk, nullptr);
  EXPECT_EQ(g.chunk->index.index, "b");
  EXPECT_EQ(g.capacity, "b_chunk");
  // Every buffer holds the chunk's extent, at most the capacity.
  for (const ir::ValuePtr& buffer : g.buffers)
    EXPECT_NE(buffer->shape, g.capacity_shape(*buffer)) << buffer->name;
  tenet::testing::expect_golden("lower/conv_stride2.chunked.txt", lower::print(lowered));
}

// The contraction pass's golden output, as printed IR (plans included), read
// back and lowered: the split input gradient gathers its columns by col2im
// (d_x2; the other convolutions, d_x.1 with its init too, are the
// convolution library's).
TEST(LowerGemms, SplitGathersAsCol2im) {
  const std::string path = std::string(TENET_SOURCE_DIR) + "/tests/passes/contraction.ir.golden";
  ir::Module m = ir::parse_ir(SourceFile(path, tenet::testing::read_file(path)));
  const ir::Function* conv = m.find("conv");
  ASSERT_NE(conv, nullptr);
  const lower::LoweredFunction lowered = lower::lower(*conv, 0);
  int scatters = 0;
  for (const auto& [s, g] : lowered.gemms) {
    EXPECT_EQ(bool(g.scatter), bool(g.plan.split)) << s->compute.result->name;
    scatters += g.scatter ? 1 : 0;
  }
  EXPECT_EQ(scatters, 1);
  tenet::testing::expect_golden("lower/conv.txt", lower::print(lowered));
}

// The memory plan of a function with loops (the printer's routing sample):
// carried tensors advance in place, by copy or not at all; slots of
// temporaries read across iterations live until their loop ends.
TEST(PlanMemory, LoopsCarryAndSlots) {
  const std::string path = std::string(TENET_SOURCE_DIR) + "/tests/golden/ir/routing.ir";
  ir::Module m = ir::parse_ir(SourceFile(path, tenet::testing::read_file(path)));
  const lower::LoweredFunction lowered = lower::lower(m.functions.at(0), 0);
  EXPECT_FALSE(lowered.memory.slots.empty());
  EXPECT_FALSE(lowered.memory.carry_kind.empty());
  for (const lower::WorkspaceSlot& slot : lowered.memory.slots)
    EXPECT_LE(0, slot.live.first) << slot.value->name;
  tenet::testing::expect_golden("lower/routing.txt", lower::print(lowered));
}

}  // namespace
}  // namespace tenet::codegen::testing
