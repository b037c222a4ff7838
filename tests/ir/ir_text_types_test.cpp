// The IR text form of the element types bool, uint16/32/64 and float16: a
// float16 value reads as float32 and its statement's body is float32, in the
// printed text as in the builder; print(parse(print(f))) == print(f).
#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/ir_parser.h"
#include "ir/printer.h"
#include "support/error.h"

namespace tenet::ir {
namespace {

const char* kText =
    R"(func types[N](%h: float16[N], %m: bool[N], %u: uint64[N], %v: uint16[N], %w: uint32[N]) {
  %s[]: float32[] = sum [i in 0:N] select(%m[i], %h[i], cast<float32>(%u[i]))
  %r[i]: float16[N] = mul(cast<float32>(cast<float16>(%s[])), %h[i])
  %k[i]: uint32[N] = add(cast<uint32>(%v[i]), %w[i])
  return %r, %k
}
)";

TEST(IrTextTypes, RoundTrips) {
  Module m = parse_ir(SourceFile("types.ir", kText));
  EXPECT_EQ(print(m), kText);
  const Function& f = m.functions[0];
  EXPECT_EQ(f.inputs[0]->type, ElemType::F16);
  EXPECT_EQ(f.outputs[0]->type, ElemType::F16);
  EXPECT_EQ(f.outputs[1]->type, ElemType::U32);
}

TEST(IrTextTypes, Float16IsComputedInFloat32) {
  // A read of a float16 value is float32; a float16 body is an error.
  Module m = parse_ir(SourceFile("types.ir", kText));
  EXPECT_EQ(make_read(m.functions[0].inputs[0], {Affine::var("i")})->type, ElemType::F32);
  const std::string bad =
      "func f[N](%h: float16[N]) {\n  %r[i]: float16[N] = cast<float16>(%h[i])\n  return %r\n}\n";
  try {
    parse_ir(SourceFile("bad.ir", bad));
    ADD_FAILURE() << "no error";
  } catch (const CompileError& e) {
    EXPECT_NE(
        std::string(e.what()).find(
            "the body has type float16, the result is float16 (computed in float32: the body is "
            "float32)"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tenet::ir
