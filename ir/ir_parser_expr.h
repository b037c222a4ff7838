/// \file
/// Internal to the IR parser (ir_parser.cpp): the token cursor and the parts
/// of the grammar below statements: types, sizes, affine indices and
/// expressions.
///
/// Expects the tokens of one file and, while a function is parsed, its size
/// parameters and visible values. Guarantees expressions built through the
/// builders (builder.h) after checking their typing rules, so a malformed file
/// gives a CompileError at the offending token, never a failed assertion.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ir/ir_lexer.h"
#include "support/diagnostics.h"

namespace tenet::ir {

struct TypeSpec {
  ElemType type = ElemType::F32;
  std::vector<SizeExpr> shape;
  std::vector<int> layout;
};

class ExprParser {
 public:
  explicit ExprParser(const SourceFile& file) : file_(file), toks_(lex_ir(file)) {}

 protected:
  // Deeper nesting than this is refused rather than risking the stack.
  static constexpr int kMaxNesting = 256;
  // Like the language (lang/check_internal.h): each index of a statement is a
  // loop of the generated code, whose compile time grows steeply with depth.
  static constexpr int kMaxIndices = 32;

  // ---- tokens -------------------------------------------------------------
  const Token& peek(size_t ahead = 0) const {
    size_t i = pos_ + ahead;
    return toks_[i < toks_.size() ? i : toks_.size() - 1];
  }
  const Token& next() {
    const Token& t = peek();
    if (pos_ + 1 < toks_.size()) ++pos_;
    last_end_ = t.span.end;
    return t;
  }
  bool is_punct(const char* p, size_t ahead = 0) const {
    return peek(ahead).kind == TokKind::Punct && peek(ahead).text == p;
  }
  bool is_word(const char* w, size_t ahead = 0) const {
    return peek(ahead).kind == TokKind::Ident && peek(ahead).text == w;
  }
  bool accept(const char* p) {
    if (!is_punct(p)) return false;
    next();
    return true;
  }
  static std::string describe(const Token& t) {
    if (t.kind == TokKind::End) return "end of file";
    if (t.kind == TokKind::Value) return "'%" + t.text + "'";
    if (t.kind == TokKind::String) return "a string";
    return "'" + t.text + "'";
  }
  [[noreturn]] void fail(Span span, const std::string& message) { fail_at(file_, span, message); }
  [[noreturn]] void fail_here(const std::string& expected) {
    fail(peek().span, "expected " + expected + ", found " + describe(peek()));
  }
  void expect(const char* p, const std::string& context) {
    if (!accept(p)) fail_here(std::string("'") + p + "' " + context);
  }
  void expect_word(const char* w, const std::string& context) {
    if (!is_word(w)) fail_here(std::string("'") + w + "' " + context);
    next();
  }
  const Token& expect_ident(const std::string& what) {
    if (peek().kind != TokKind::Ident) fail_here(what);
    return next();
  }
  Span span_from(Span begin) const { return Span::of(begin.begin, last_end_); }

  /// A size expression over the function's size parameters.
  SizeExpr size(const char* what);
  /// An affine index over `indices` (domain indices and loop variables).
  Affine affine(const std::set<std::string>& indices);
  Expr expr(const std::set<std::string>& indices, int depth);
  int64_t int_literal();
  ElemType type_name_token();
  /// TYPE '[' sizes ']' [layout(...)]
  TypeSpec type_spec();
  /// [layout(d0, d1, ...)], not yet checked against a rank (check_layout).
  std::vector<int> layout_suffix();
  void check_layout(const std::vector<int>& layout, int rank, Span at);
  /// The visible value named by a %name token.
  ValuePtr lookup(const Token& name);

  const SourceFile& file_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  uint32_t last_end_ = 0;
  std::vector<std::map<std::string, ValuePtr>> scopes_;  // innermost last
  std::set<std::string> names_;                          // every value name of the function
  std::set<std::string> size_params_;                    // of the current function

 private:
  SizeExpr int_sum(std::vector<std::string>& names, int depth);
  SizeExpr int_term(std::vector<std::string>& names, int depth);
  SizeExpr int_factor(std::vector<std::string>& names, int depth);
  Expr operation(const Token& op, const std::vector<Expr>& args, const std::vector<Span>& spans);
  void expect_arity(const Token& op, const std::vector<Expr>& args, size_t n);
  Expr constant();
  Expr read(const std::set<std::string>& indices, int depth);
  bool is_size_param(const std::string& s) const { return size_params_.count(s) > 0; }
  static std::string tname(const Expr& e) { return std::string(type_name(e->type)); }
};

}  // namespace tenet::ir
