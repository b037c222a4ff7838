// The zoo programs of the element types (bool, unsigned, float16) and their
// gradients printed as source check back into functions with the same input
// and output types that compute the same values. float16 needs the printer's
// help: a new float16 tensor's right side is written `float16(...)`.
#include <gtest/gtest.h>

#include "ad/grad.h"
#include "lang/check.h"
#include "tests/lang/unparse_roundtrip.h"
#include "tests/support/golden.h"

namespace tenet {
namespace {

std::vector<std::string> types_of(const std::vector<ir::ValuePtr>& values) {
  std::vector<std::string> out;
  for (const ir::ValuePtr& v : values) out.push_back(std::string(type_name(v->type)));
  return out;
}

void expect_same_types(const ir::Function& fn) {
  const std::string text =
      testing::expect_unparse_roundtrip(fn, {{"N", 3}, {"D", 4}, {"C", 4}, {"I", 4}, {"O", 2}});
  ir::Module back = lang::compile_source(SourceFile(fn.name + ".tn", text));
  ASSERT_EQ(back.functions.size(), 1u);
  EXPECT_EQ(types_of(back.functions[0].inputs), types_of(fn.inputs)) << text;
  EXPECT_EQ(types_of(back.functions[0].outputs), types_of(fn.outputs)) << text;
}

TEST(UnparseTypes, ZooProgramsAndGradientsKeepTheirTypes) {
  for (const char* name : {"tc_bool", "tc_unsigned", "tc_half"}) {
    SCOPED_TRACE(name);
    const std::string relative = std::string("models/zoo/") + name + ".tn";
    ir::Module m = lang::compile_source(
        SourceFile(relative, testing::read_file(testing::source_path(relative))));
    expect_same_types(*m.find(name));
    ad::GradRequest req;
    req.vjp = true;
    expect_same_types(ad::differentiate(m, name, req));
  }
}

}  // namespace
}  // namespace tenet
