// Expressions, index expressions and sizes as source text, with the fewest
// parentheses that parse back to the same tree (binary operators are
// left-associative, so a right operand of equal precedence keeps its
// parentheses: `a - (b - c)`, and `a + (b + c)`, whose float sum differs).
//
// Typing: the checker types number literals from the other operand, and a
// right side of literals only as float32 (the language's rule 5). The IR is
// typed throughout, so a subexpression made of literals only is anchored
// with a cast (`float64(0.5)`) exactly where the checker's rule would give it
// another type than the IR's: at the root of a statement, under a cast, and
// in a comparison of two literals.
#include <charconv>
#include <cmath>

#include "ir/builtins.h"
#include "lang/unparse_internal.h"
#include "support/diagnostics.h"

namespace tenet::lang::unparse_detail {

namespace {

/// The shortest text that reads back as exactly v.
std::string number_text(double v) {
  if (std::isnan(v)) return "log(-1)";
  if (std::isinf(v)) return v > 0 ? "exp(1000)" : "-exp(1000)";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general);
  std::string s(buf, r.ptr);
  // "1e-07" -> "1e-7", as people write it.
  if (auto e = s.find('e'); e != std::string::npos) {
    size_t digits = e + 1 + (s[e + 1] == '-' || s[e + 1] == '+');
    if (s[e + 1] == '+') s.erase(e + 1, 1), --digits;
    while (digits + 1 < s.size() && s[digits] == '0') s.erase(digits, 1);
  }
  return s;
}

struct InfixOp {
  const char* text;
  int level;
};

InfixOp infix(ir::BinOp op) {
  switch (op) {
    case ir::BinOp::Add:
      return {"+", 4};
    case ir::BinOp::Sub:
      return {"-", 4};
    case ir::BinOp::Mul:
      return {"*", 5};
    case ir::BinOp::Div:
      return {"/", 5};
    case ir::BinOp::Lt:
      return {"<", 3};
    case ir::BinOp::Le:
      return {"<=", 3};
    case ir::BinOp::Gt:
      return {">", 3};
    case ir::BinOp::Ge:
      return {">=", 3};
    case ir::BinOp::Eq:
      return {"==", 3};
    case ir::BinOp::Ne:
      return {"!=", 3};
    case ir::BinOp::And:
      return {"&&", 2};
    case ir::BinOp::Or:
      return {"||", 1};
    case ir::BinOp::Rem:
      return {"%", 5};
    default:
      break;  // written as functions
  }
  return {"?", 0};
}

}  // namespace

std::string size_text(const ir::SizeExpr& s, const std::string& function) {
  std::string text = s.str();
  if (text.find("min(") != std::string::npos || text.find("max(") != std::string::npos)
    throw CompileError("error: cannot print '" + function + "' as source: the size '" + text +
                       "' has no source form (the language writes no min or max of sizes)");
  return text;
}

bool literal_only(const ir::Expr& e) {
  switch (e->kind) {
    case ir::ExprKind::Const:
      return e->type != ElemType::Bool;
    case ir::ExprKind::Size:
      return e->size.constant().has_value();
    case ir::ExprKind::Unary:
      return e->unop != ir::UnOp::Not && literal_only(e->args[0]);
    case ir::ExprKind::Binary:
      return !ir::is_comparison(e->binop) && !ir::is_logical(e->binop) &&
             literal_only(e->args[0]) && literal_only(e->args[1]);
    case ir::ExprKind::Select:
      return literal_only(e->args[1]) && literal_only(e->args[2]);
    case ir::ExprKind::Index:
    case ir::ExprKind::Read:
    case ir::ExprKind::Cast:
      break;
  }
  return false;
}

void collect_symbols(const ir::Expr& e, std::set<std::string>& out) {
  if (e->kind == ir::ExprKind::Size) {
    auto s = e->size.symbols();
    out.insert(s.begin(), s.end());
  }
  if (e->kind == ir::ExprKind::Read) {
    for (const auto& a : e->indices) {
      auto s = a.offset.symbols();
      out.insert(s.begin(), s.end());
    }
  }
  for (const auto& a : e->args) collect_symbols(a, out);
}

std::string ExprText::body(const ir::Expr& e, ElemType statement_type) const {
  return expr(e, e->type != statement_type).s;
}

// A positive symbolic offset, positive terms, a negative symbolic offset,
// negative terms, a constant offset: `2*i + ki`, `S + s`, `j - S`,
// `N - 1 - i`, `h - 2*y`. Index expressions are exact integer arithmetic, so
// the grouping is free.
std::string ExprText::affine(const ir::Affine& a) const {
  std::string s;
  auto term = [&](const std::string& name, int64_t c) {
    int64_t mag = c < 0 ? -c : c;
    if (s.empty())
      s += c < 0 ? "-" : "";
    else
      s += c < 0 ? " - " : " + ";
    if (mag != 1) s += std::to_string(mag) + "*";
    s += names_.of_index(name);
  };
  std::string offset = a.offset.is_constant() ? "" : size_text(a.offset, names_.function);
  if (!offset.empty() && offset[0] != '-') s = offset;  // `S + s`, `N - 1 - i`
  for (const auto& [name, c] : a.terms)
    if (c > 0) term(name, c);
  if (!offset.empty() && offset[0] == '-') {  // `j - S`
    std::string negated = size_text(-a.offset, names_.function);
    if (s.empty())
      s = offset;
    else
      s += " - " + (negated.find(' ') == std::string::npos ? negated : "(" + negated + ")");
  }
  for (const auto& [name, c] : a.terms)
    if (c < 0) term(name, c);
  if (a.offset.is_constant()) {
    int64_t k = *a.offset.constant();
    if (s.empty())
      s = std::to_string(k);
    else if (k > 0)
      s += " + " + std::to_string(k);
    else if (k < 0)
      s += " - " + std::to_string(-k);
  }
  return s;
}

std::string ExprText::operand(const ir::Expr& e, bool anchor, int min_level, bool right) const {
  Text t = expr(e, anchor);
  // A negative right operand reads better parenthesised: `x - (-2)`, `x * (-y)`.
  if (t.level < min_level || (right && t.s[0] == '-')) return "(" + t.s + ")";
  return t.s;
}

ExprText::Text ExprText::expr(const ir::Expr& e, bool anchor) const {
  if (anchor && literal_only(e))
    return {std::string(type_name(e->type)) + "(" + expr(e, false).s + ")", 7};
  switch (e->kind) {
    case ir::ExprKind::Const: {
      if (e->type == ElemType::Bool) return {e->value != 0 ? "0 == 0" : "0 != 0", 3};
      std::string s = number_text(e->value);
      return {s, s[0] == '-' ? 6 : 7};
    }
    case ir::ExprKind::Index:
      return {names_.of_index(e->index), 7};
    case ir::ExprKind::Size: {
      if (auto c = e->size.constant()) {
        std::string s = std::to_string(*c);
        return {s, s[0] == '-' ? 6 : 7};
      }
      if (e->size.as_symbol()) return {*e->size.as_symbol(), 7};
      // A size expression reads as arithmetic of int64 values: `N - 1`, `2*S`.
      std::string text = size_text(e->size, names_.function);
      bool sum = text.find(" + ") != std::string::npos || text.find(" - ") != std::string::npos;
      bool product = text.find('*') != std::string::npos || text.find(" / ") != std::string::npos;
      return {text, sum ? 4 : product ? 5 : text[0] == '-' ? 6 : 7};
    }
    case ir::ExprKind::Read: {
      std::string s = names_.of(e->tensor);
      if (e->indices.empty()) return {s, 7};
      s += e->guarded || guard_.count(e.get()) ? "?(" : "(";
      for (size_t i = 0; i < e->indices.size(); ++i)
        s += (i ? ", " : "") +
             (e->is_computed(i) ? expr(e->computed[i], false).s : affine(e->indices[i]));
      return {s + ")", 7};
    }
    case ir::ExprKind::Unary: {
      if (e->unop == ir::UnOp::Neg) return {"-" + operand(e->args[0], false, 7), 6};
      if (e->unop == ir::UnOp::Not) return {"!" + operand(e->args[0], false, 6), 6};
      return {std::string(ir::builtin_of(e->unop)->name) + "(" + expr(e->args[0], false).s + ")",
              7};
    }
    case ir::ExprKind::Binary:
      return binary(*e);
    case ir::ExprKind::Select:
      return {"select(" + expr(e->args[0], false).s + ", " + expr(e->args[1], false).s + ", " +
                  expr(e->args[2], false).s + ")",
              7};
    case ir::ExprKind::Cast: {
      const ir::Expr& arg = e->args[0];
      if (e->type == ElemType::Bool) {
        // A cast to bool is "is not zero"; 0 takes the operand's type.
        return {operand(arg, arg->type != ElemType::F32, 4) + " != 0", 3};
      }
      return {std::string(type_name(e->type)) + "(" + expr(arg, arg->type != e->type).s + ")", 7};
    }
  }
  return {"?", 7};
}

ExprText::Text ExprText::binary(const ir::ExprNode& e) const {
  const ir::Expr& a = e.args[0];
  const ir::Expr& b = e.args[1];
  if (const ir::Builtin* f = ir::builtin_of(e.binop))  // pow, fmax, ...: written as calls
    return {std::string(f->name) + "(" + expr(a, false).s + ", " + expr(b, false).s + ")", 7};
  InfixOp op = infix(e.binop);
  if (ir::is_comparison(e.binop)) {
    // Two literals compare as float32 in the checker; anchor them otherwise.
    bool anchor = literal_only(a) && literal_only(b) && a->type != ElemType::F32;
    return {operand(a, anchor, 4) + " " + op.text + " " + operand(b, false, 4), 3};
  }
  return {operand(a, false, op.level) + " " + op.text + " " +
              operand(b, false, op.level + 1, /*right=*/true),
          op.level};
}

}  // namespace tenet::lang::unparse_detail
