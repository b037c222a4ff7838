// The language's one table of builtins, keywords and type names
// (ir/builtins.h): its invariants, that the IR's type rules agree with it,
// and that the language (lang/) accepts exactly its names.
#include "ir/builtins.h"

#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string>

#include "lang/ast.h"
#include "support/types.h"
#include "tests/support/golden.h"

namespace tenet::ir {
namespace {

TEST(Builtins, EachNameOnceAndEachOperationOnePreferredName) {
  std::set<std::string_view> names;
  std::set<int> unops, binops;
  for (const Builtin& b : builtins()) {
    EXPECT_TRUE(names.insert(b.name).second) << b.name;
    if (b.kind == BuiltinKind::Unary) {
      EXPECT_EQ(b.arity, 1) << b.name;
      EXPECT_TRUE(!b.preferred || unops.insert(int(b.unop)).second) << b.name;
      EXPECT_EQ(builtin_of(b.unop)->unop, b.unop) << b.name;
    }
    if (b.kind == BuiltinKind::Binary) {
      EXPECT_EQ(b.arity, 2) << b.name;
      EXPECT_TRUE(!b.preferred || binops.insert(int(b.binop)).second) << b.name;
      EXPECT_EQ(builtin_of(b.binop)->binop, b.binop) << b.name;
    }
  }
  for (std::string_view w : keywords()) EXPECT_FALSE(names.count(w)) << w;
  for (std::string_view w : type_names()) EXPECT_FALSE(names.count(w)) << w;
}

// Every unary operation but neg and not is a builtin; the binary operations
// written as calls are builtins, the operators are not.
TEST(Builtins, CoverTheOperationsWrittenAsCalls) {
  for (int op = 0; op <= int(UnOp::StopGradient); ++op) {
    const bool operator_form = UnOp(op) == UnOp::Neg || UnOp(op) == UnOp::Not;
    EXPECT_EQ(builtin_of(UnOp(op)) == nullptr, operator_form) << op_name(UnOp(op));
  }
  for (BinOp op : {BinOp::Pow, BinOp::Max, BinOp::Min, BinOp::Atan2, BinOp::Hypot, BinOp::Copysign,
                   BinOp::Nextafter})
    EXPECT_NE(builtin_of(op), nullptr) << op_name(op);
  for (BinOp op : {BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Lt, BinOp::Le, BinOp::Gt,
                   BinOp::Ge, BinOp::Eq, BinOp::Ne, BinOp::And, BinOp::Or, BinOp::Rem})
    EXPECT_EQ(builtin_of(op), nullptr) << op_name(op);
  EXPECT_EQ(builtin_of(BinOp::Max)->name, "fmax");
  EXPECT_EQ(builtin_of(UnOp::Abs)->name, "abs");
}

// The IR's own type rules (builder.h: only neg, not and abs take non-floats;
// ir::floats_only) say what the table says.
TEST(Builtins, OperandsAgreeWithTheIrTypeRules) {
  for (const Builtin& b : builtins()) {
    if (b.kind == BuiltinKind::Unary) {
      EXPECT_EQ(b.operands == Operands::Numbers, b.unop == UnOp::Abs) << b.name;
    }
    if (b.kind == BuiltinKind::Binary) {
      EXPECT_EQ(b.operands == Operands::Floats, floats_only(b.binop)) << b.name;
    }
  }
  EXPECT_EQ(find_builtin("fma")->operands, Operands::Floats);
}

TEST(Builtins, TheLanguageAcceptsExactlyTheTable) {
  for (const Builtin& b : builtins()) {
    EXPECT_TRUE(ast::is_builtin(std::string(b.name))) << b.name;
    EXPECT_EQ(ast::builtin_arity(std::string(b.name)), b.arity) << b.name;
  }
  EXPECT_EQ(find_builtin(ast::kReshape)->kind, BuiltinKind::Reshape);
  EXPECT_FALSE(ast::is_builtin("fmod"));
  for (std::string_view w : type_names()) EXPECT_TRUE(parse_type_name(w)) << w;
}

// The documentation lists what the table and the IR have (docs/ir.md's
// UNOP and BINOP lacked the operations added after the first eight).
TEST(Builtins, TheDocumentationListsThem) {
  // The identifiers of a piece of text.
  auto words = [](const std::string& text) {
    std::set<std::string> out;
    std::string word;
    for (char c : text + " ") {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
        word += c;
      } else if (!word.empty()) {
        out.insert(word);
        word.clear();
      }
    }
    return out;
  };
  auto between = [](const std::string& text, const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.substr(at, text.find(to, at) - at);
  };
  const std::string ir_doc = tenet::testing::read_file(tenet::testing::source_path("docs/ir.md"));
  const std::set<std::string> unops = words(between(ir_doc, "UNOP       :=", "BINOP")),
                              binops = words(between(ir_doc, "BINOP      :=", "ELEMTYPE"));
  for (int op = 0; op <= int(UnOp::StopGradient); ++op)
    EXPECT_TRUE(unops.count(op_name(UnOp(op)))) << op_name(UnOp(op));
  for (int op = 0; op <= int(BinOp::Rem); ++op)
    EXPECT_TRUE(binops.count(op_name(BinOp(op)))) << op_name(BinOp(op));
  const std::set<std::string> listed =
      words(between(tenet::testing::read_file(tenet::testing::source_path("docs/language.md")),
                    "- **Builtin functions**", "\n\n"));
  for (const Builtin& b : builtins()) EXPECT_TRUE(listed.count(std::string(b.name))) << b.name;
}

}  // namespace
}  // namespace tenet::ir
