// The product reduction in IR text: printed as "prod", parsed back to the
// same IR (and so the same text).
#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/ir_parser.h"
#include "ir/printer.h"

namespace tenet::ir {
namespace {

TEST(ProdText, PrintsAndParsesBack) {
  FunctionBuilder fb("f");
  fb.size_param("N");
  fb.size_param("K");
  SizeExpr n = SizeExpr::sym("N"), k = SizeExpr::sym("K");
  ValuePtr x = fb.input("x", ElemType::F32, {n, k});
  ValuePtr p = fb.compute("p", {{"i", SizeExpr(0), n}}, {{"k", SizeExpr(0), k}}, ReduceOp::Prod,
                          make_read(x, {Affine::var("i"), Affine::var("k")}));
  fb.output(p);
  Module m;
  m.functions.push_back(fb.finish());
  std::string text = print(m.functions[0]);
  EXPECT_NE(text.find("prod"), std::string::npos) << text;
  Module back = parse_ir(SourceFile("p.ir", text));
  ASSERT_EQ(back.functions.size(), 1u);
  EXPECT_EQ(back.functions[0].body.at(0).compute.op, ReduceOp::Prod);
  EXPECT_EQ(print(back.functions[0]), text);
}

}  // namespace
}  // namespace tenet::ir
