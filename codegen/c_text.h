/// \file
/// Small pieces of C++ text shared by the code generator: expressions with
/// their precedence (so parentheses appear only where C++ needs them), typed
/// literals, size expressions, and identifier allocation.
///
/// Internal to codegen/. Guarantees: every literal reads back as exactly the
/// value and type it was made from; every size expression evaluates in C++ to
/// what SizeExpr::eval gives ('/' is floor division, like the IR).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "ir/ir.h"
#include "ir/size_expr.h"
#include "support/types.h"

namespace tenet::codegen::detail {

/// C++ operator precedence, higher binds tighter (only the levels we emit).
enum Prec : int {
  kPrecTernary = 3,
  kPrecOr = 4,
  kPrecAnd = 5,
  kPrecBitOr = 6,
  kPrecBitAnd = 8,
  kPrecEquality = 9,
  kPrecRelational = 10,
  kPrecAdditive = 12,
  kPrecMultiplicative = 13,
  kPrecUnary = 15,
  kPrecPrimary = 16,
};

/// A C++ expression and the precedence of its outermost operator.
struct CExpr {
  std::string text;
  int prec = kPrecPrimary;
};

/// The text of `e`, parenthesised when its operator binds looser than `min_prec`.
std::string wrap(const CExpr& e, int min_prec);

/// A literal of exactly this type and value: 1.0f and 1e-7f (float), 0.5 (double),
/// 3 (integers), true. Floats print the shortest text that reads back to the
/// same value (std::to_chars; subnormals included: 1e-45f); infinities and
/// NaN, including a float32 constant whose double value is beyond float's
/// range (as in the interpreter, it is infinite), use std::numeric_limits.
CExpr literal(double value, ElemType type);

/// A C string literal with the text escaped ("a\"b").
std::string c_string_literal(const std::string& text);

/// User text (a file name) made safe inside a comment of generated code: a
/// C++ `//` or `/* */` comment, a CMake or shell `#` comment, a line of a
/// README. Control characters (a newline would end the comment and make the
/// rest code) become C escapes (\n, \x01), a backslash \\, and "*/" "*\/".
std::string comment_text(const std::string& text);

/// Renames size parameters whose names are not usable C++ identifiers.
using NameMap = std::map<std::string, std::string>;

/// The int64_t C++ expression of a size: floor division becomes
/// tenet::floordiv(a, d), min/max become std::min<int64_t>/std::max<int64_t>.
CExpr size_to_c(const ir::SizeExpr& e, const NameMap& size_names);

/// True when the size prints as a single name or number (no operator).
bool is_simple_size(const ir::SizeExpr& e);

/// Every identifier generated code makes from a name of the program (a
/// tensor, size, index or loop variable, and the names derived from those:
/// strides, extents, buffers) starts with this prefix; the identifiers
/// generated code declares for itself (acc, offsets, workspace, gemm_m, ...)
/// never do. No macro of the headers generated code includes starts with it
/// either (tests/codegen/names_test.cpp checks), so no name a program chooses
/// can collide with a macro, a keyword, a library function or Tenet's own
/// locals, whatever headers are included: macros ignore C++ scopes and
/// namespaces, so only the spelling of the identifier itself can protect it.
/// Short, so that loops still read like the source (`for (int64_t t_n ...)`).
inline constexpr const char kNamePrefix[] = "t_";

/// Hands out C++ identifiers, each distinct from those taken before.
class Namer {
 public:
  /// An identifier for a name of the program: kNamePrefix + the name, with
  /// characters identifiers cannot have ('.' in "b.1") as '_' and runs of '_'
  /// as one (C++ reserves names containing "__"); a numeric suffix
  /// ("t_x_1") when that is taken.
  std::string take(const std::string& program_name);
  /// An identifier generated code declares for itself ("gemm_m"), or one made
  /// from an identifier this namer gave (`t_x` + "_stride0"): `base` when it
  /// is free, else with a numeric suffix.
  std::string take_derived(const std::string& base);
  /// Marks a name as used (e.g. the function's own symbol).
  void reserve(const std::string& name) { used_.insert(name); }
  bool taken(const std::string& name) const { return used_.count(name) != 0; }

 private:
  std::string take_free(const std::string& base);
  std::set<std::string> used_;
};

/// The name users know output i of `fn` by (Function::output_names).
std::string output_name(const ir::Function& fn, size_t i);
/// Whether input k of `fn` is the initial value of an output that updates it
/// (ir::Function::updated_input): the ABI passes it as that output's buffer.
bool is_updated_input(const ir::Function& fn, size_t k);

/// The words of C++ text (maximal runs of letters, digits and '_'; numbers
/// too), each once, in the order they first appear.
std::vector<std::string> words_of(const std::string& text);

/// `name` made into a valid C identifier: characters other than letters,
/// digits and '_' as '_', runs of '_' as one; a name that would be empty or
/// start with a digit gets a leading 'v'. Not injective ("a.b" and "a_b" both
/// give "a_b"): Namer makes the results distinct.
std::string sanitize_identifier(const std::string& name);

}  // namespace tenet::codegen::detail
