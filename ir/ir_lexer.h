/// \file
/// Tokens of the IR text form (docs/ir.md), for ir_parser.cpp.
///
/// Expects any bytes. Guarantees a token list ending in an End token, or a
/// CompileError at the first character that starts no token. `//` comments
/// are skipped; `#` comment lines are kept, attached to the token after them
/// (a statement's `#` lines are its source text).
#pragma once

#include <string>
#include <vector>

#include "support/diagnostics.h"

namespace tenet::ir {

enum class TokKind {
  Ident,   // letters, digits, '_' and '.', not starting with a digit or '.'
  Value,   // %name or %"quoted name"; text is the name
  Number,  // digits with an optional fraction and exponent (no sign)
  String,  // "..." with escapes decoded into text
  Punct,   // ( ) [ ] { } , : = < > ? * / + - ->
  End,
};

struct Token {
  TokKind kind = TokKind::End;
  std::string text;
  Span span;
  /// The '#' lines directly before this token, without '#' and one following space.
  std::vector<std::string> comments;
};

std::vector<Token> lex_ir(const SourceFile& file);

}  // namespace tenet::ir
