/// \file
/// The language's vocabulary, in one table: every builtin function (its
/// source name, arity, the operands it takes and the IR operation it makes),
/// the keywords and the type names. The parser and the checker (lang/), the
/// unparser, and Python's importer (through the binding `vocabulary()`)
/// read it; nothing else lists builtin names. docs/language.md describes
/// them ("Lexical structure").
///
/// Guarantees: each name once; each IR operation a builtin makes has one
/// preferred name (the one the unparser writes: `fmax`, not `max`; `abs`, not
/// `fabs`); a Binary builtin takes Floats exactly when ir::floats_only(op),
/// and a Unary one takes Numbers exactly when its op is Abs (the IR's own
/// type rules, builder.h), which tests/ir/builtins_test.cpp checks.
#pragma once

#include <string_view>
#include <vector>

#include "ir/ir.h"

namespace tenet::ir {

/// How a builtin becomes IR.
enum class BuiltinKind {
  Unary,    // one argument: make_unary(unop)
  Binary,   // two: make_binary(binop)
  Select,   // select(c, a, b): make_select
  Fma,      // fma(a, b, c) = a * b + c
  Reshape,  // reshape(...): a statement of its own, with no arity
};

/// The arguments a builtin takes (select: a bool condition, then two values
/// of one type).
enum class Operands {
  Floats,   // floats (float literals, or integer literals taken as floats)
  Numbers,  // any number, not bool
  Any,      // select
};

struct Builtin {
  std::string_view name;  // as the source writes it
  BuiltinKind kind;
  int arity;  // -1 for reshape
  Operands operands;
  UnOp unop = UnOp::Neg;     // Unary
  BinOp binop = BinOp::Add;  // Binary
  /// The name the unparser writes for this operation (false for aliases:
  /// max, min, fabs).
  bool preferred = true;
};

/// Every builtin, in docs/language.md's order.
const std::vector<Builtin>& builtins();
/// The builtin named `name`, or null.
const Builtin* find_builtin(std::string_view name);
/// The preferred builtin that makes `op`, or null for operations written as
/// operators (neg, not; add, lt, and, rem, ...).
const Builtin* builtin_of(UnOp op);
const Builtin* builtin_of(BinOp op);

/// The keywords: `def for in where`, and `exists` (a keyword only after
/// `where`, but tools that choose names avoid it everywhere).
const std::vector<std::string_view>& keywords();
/// The type names (support/types.h, parse_type_name): reserved words.
const std::vector<std::string_view>& type_names();

}  // namespace tenet::ir
