/// \file
/// The lexer: source text to tokens (the token grammar is in docs/language.md).
///
/// Expects: any byte string. Guarantees: a token vector whose last element is
/// either End (the whole file lexed) or Error (the first character that starts
/// no token, or a malformed or out-of-range number), so that the parser reports
/// lexical and syntax errors in source order. Never reads past the text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "support/diagnostics.h"
#include "support/types.h"

namespace tenet::lang {

enum class TokenKind {
  Name,    // identifiers, including builtin names such as exp
  Number,  // 123, 1.5, .5, 1e-7
  Type,    // float, float32, int64, ... (see parse_type_name)
  KwDef,
  KwFor,
  KwIn,
  KwWhere,
  LParen,
  RParen,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Semicolon,
  Question,
  Plus,
  Minus,
  Star,
  Slash,
  Percent,  // %
  Less,
  LessEq,
  Greater,
  GreaterEq,
  EqEq,
  NotEq,
  AndAnd,
  OrOr,
  Not,
  Assign,          // =
  Accumulate,      // +=
  SumReduce,       // +=!
  MaxReduce,       // max=!  (written together)
  MinReduce,       // min=!
  ProdReduce,      // *=!
  MaxAccumulate,   // max=  (written together)
  MinAccumulate,   // min=
  ProdAccumulate,  // *=
  Arrow,           // ->
  Equivalent,      // <=> (TC's reduction hint)
  End,
  Error,
};

struct Token {
  TokenKind kind = TokenKind::End;
  Span span;
  std::string_view text;          // a view into the SourceFile's text
  double number = 0;              // Number
  bool is_integer = false;        // Number written with digits only
  ElemType type = ElemType::F32;  // Type
  std::string error;              // Error: the diagnostic message
};

/// Lexes the whole file (see the \file comment for the guarantees). The End
/// token sits just after the last token, so "at end of file" diagnostics point
/// at the end of the program text rather than at trailing blank lines.
std::vector<Token> lex(const SourceFile& file);

/// How a diagnostic names a token: "'+'", "'foo'", "end of file".
std::string describe(const Token& token);

}  // namespace tenet::lang
