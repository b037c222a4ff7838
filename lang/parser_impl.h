/// \file
/// The parser's internals, shared by parser.cpp (functions and statements)
/// and parser_expr.cpp (expressions). Not a public interface: use parser.h.
///
/// Robustness (the parser is fuzzed): the lexer ends the token vector with End
/// or Error and the parser never consumes either, so peeking past the end is
/// impossible; recursion is bounded by kMaxNesting; and every expression tree is
/// at most kMaxNesting high, so the recursive passes after parsing (printer,
/// checker, destructors) cannot exhaust the stack either.
#pragma once

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lang/ast.h"
#include "lang/lexer.h"
#include "support/diagnostics.h"

namespace tenet::lang::parsing {

constexpr int kMaxNesting = 256;

// An expression and the height of its tree (a leaf is 1).
struct Parsed {
  ast::ExprPtr expr;
  int height = 1;
};

inline std::string quote(std::string_view s) {
  return "'" + std::string(s) + "'";
}

bool starts_expression(TokenKind kind);
bool is_binary_op(TokenKind kind);

class Parser {
 public:
  explicit Parser(const SourceFile& file);
  ast::File program();

 private:
  using K = TokenKind;

  // ---- tokens (never moves past the final End or Error token) ----
  const Token& peek(size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  bool at(K kind) const { return peek().kind == kind; }
  const Token& advance() {
    const Token& t = tokens_[pos_];
    if (t.kind != K::End && t.kind != K::Error) ++pos_;
    last_end_ = t.span.end;
    return t;
  }
  bool accept(K kind) {
    if (!at(kind)) return false;
    advance();
    return true;
  }
  // The span from `begin` to the end of the last token consumed.
  Span span_from(uint32_t begin) const { return Span::of(begin, last_end_); }

  // ---- errors ----
  [[noreturn]] void fail(const Token& t, const std::string& message, std::vector<Note> notes = {});
  // "expected WHAT, found TOKEN" (or "expected WHAT at end of file") at the current token.
  [[noreturn]] void expected(const std::string& what, std::vector<Note> notes = {});
  const Token& expect(K kind, const std::string& what, std::vector<Note> notes = {});
  static Note to_match(const Token& open);
  Note shifted_target(const ast::Stmt& s, const ast::Expr& e) const;
  ast::Ident ident(const std::string& what);
  void check_tensor_name(const ast::Ident& name);

  // ---- functions and statements (parser.cpp) ----
  ast::Function function();
  ast::Param param();
  ast::Output output();
  std::vector<ast::Dim> dims(const Token& open);
  std::vector<ast::StmtPtr> block(const Token& open, int depth);
  ast::StmtPtr statement(int depth);
  ast::StmtPtr for_loop(int depth);
  ast::StmtPtr tuple_call();
  ast::StmtPtr assignment();
  void lhs_indices(ast::Stmt& s, const Token& open);
  void call_rest(ast::Stmt& s);
  void reshape_rest(ast::Stmt& s);
  void where_clause(ast::Stmt& s);
  ast::RangeClause range_clause();
  void equivalent(ast::Stmt& s);

  // ---- expressions (parser_expr.cpp) ----
  Parsed expr();
  void match_parentheses();
  bool left_side_follows() const;
  Parsed finish(ast::ExprPtr e, std::vector<Parsed> args);
  Parsed binary(int level);
  Parsed unary();
  Parsed primary();
  Parsed name_or_call();
  std::vector<Parsed> arguments(const Token& open, const std::string& what);

  const SourceFile& file_;
  std::vector<Token> tokens_;
  std::set<std::string_view> def_names_;  // every `def NAME` in the file
  static constexpr size_t kNoMatch = size_t(-1);
  std::vector<size_t> closing_;  // token index of the ')' matching each '('
  size_t pos_ = 0;
  uint32_t last_end_ = 0;
  int nesting_ = 0;  // current recursion depth of unary()
};

}  // namespace tenet::lang::parsing
