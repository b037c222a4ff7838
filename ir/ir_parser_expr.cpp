#include "ir/ir_parser_expr.h"

#include <charconv>
#include <optional>

#include "ir/affine.h"
#include "ir/builder.h"

namespace tenet::ir {

namespace {

template <typename Op, int N>
bool lookup_op(const std::string& name, const Op (&ops)[N], Op& out) {
  for (Op op : ops)
    if (name == op_name(op)) return out = op, true;
  return false;
}

const UnOp all_unops[] = {UnOp::Neg,  UnOp::Not,         UnOp::Exp,   UnOp::Log,   UnOp::Sqrt,
                          UnOp::Tanh, UnOp::Sigmoid,     UnOp::Abs,   UnOp::Rsqrt, UnOp::Floor,
                          UnOp::Ceil, UnOp::Round,       UnOp::Trunc, UnOp::Rint,  UnOp::Exp2,
                          UnOp::Log2, UnOp::Log10,       UnOp::Log1p, UnOp::Expm1, UnOp::Sin,
                          UnOp::Cos,  UnOp::Tan,         UnOp::Asin,  UnOp::Acos,  UnOp::Atan,
                          UnOp::Sinh, UnOp::Cosh,        UnOp::Erf,   UnOp::Erfc,  UnOp::Cbrt,
                          UnOp::Sign, UnOp::StopGradient};
const BinOp all_binops[] = {BinOp::Add,   BinOp::Sub,      BinOp::Mul,       BinOp::Div,
                            BinOp::Pow,   BinOp::Max,      BinOp::Min,       BinOp::Lt,
                            BinOp::Le,    BinOp::Gt,       BinOp::Ge,        BinOp::Eq,
                            BinOp::Ne,    BinOp::And,      BinOp::Or,        BinOp::Atan2,
                            BinOp::Hypot, BinOp::Copysign, BinOp::Nextafter, BinOp::Rem};

}  // namespace

// ---- sizes and affine indices ----------------------------------------------

// Integer expressions over names: `sum := ['-'] term {('+'|'-') term}`,
// `term := factor {'*' factor | '/' INT}`, `factor := INT | NAME | '(' sum ')'
// | min(sum, sum) | max(sum, sum)`. Names become SizeExpr symbols; `names`
// collects them in order of first appearance.
SizeExpr ExprParser::int_sum(std::vector<std::string>& names, int depth) {
  if (depth > kMaxNesting) fail(peek().span, "expression nested too deeply");
  bool negate = accept("-");
  SizeExpr acc = int_term(names, depth);
  if (negate) acc = -acc;
  for (;;) {
    if (accept("+"))
      acc = acc + int_term(names, depth);
    else if (accept("-"))
      acc = acc - int_term(names, depth);
    else
      return acc;
  }
}

// Constant factors are gathered first so that "2*B*N" reads back as 2 * (B*N),
// the normal form SizeExpr prints that way.
SizeExpr ExprParser::int_term(std::vector<std::string>& names, int depth) {
  int64_t scale = 1;
  std::optional<SizeExpr> product;
  auto multiply = [&](const SizeExpr& f) {
    if (auto c = f.constant()) {
      if (__builtin_mul_overflow(scale, *c, &scale)) fail(peek().span, "size overflows 64 bits");
    } else
      product = product ? *product * f : f;
  };
  multiply(int_factor(names, depth));
  for (;;) {
    if (accept("*")) {
      multiply(int_factor(names, depth));
    } else if (is_punct("/")) {
      next();
      Span at = peek().span;
      int64_t d = int_literal();
      if (d <= 0) fail(at, "a size can only be divided by a positive constant");
      SizeExpr whole = product ? *product * SizeExpr(scale) : SizeExpr(scale);
      SizeExpr quotient = SizeExpr::floordiv(whole, d);
      scale = 1;
      product.reset();
      multiply(quotient);
    } else {
      return product ? *product * SizeExpr(scale) : SizeExpr(scale);
    }
  }
}

SizeExpr ExprParser::int_factor(std::vector<std::string>& names, int depth) {
  if (peek().kind == TokKind::Number) return SizeExpr(int_literal());
  if (accept("(")) {
    SizeExpr e = int_sum(names, depth + 1);
    expect(")", "to close '('");
    return e;
  }
  if ((is_word("min") || is_word("max")) && is_punct("(", 1)) {
    bool is_min = next().text == "min";
    next();
    SizeExpr a = int_sum(names, depth + 1);
    expect(",", std::string("between the arguments of ") + (is_min ? "min" : "max"));
    SizeExpr b = int_sum(names, depth + 1);
    expect(")", "to close the arguments");
    return is_min ? SizeExpr::min(a, b) : SizeExpr::max(a, b);
  }
  const std::string& name = expect_ident("a size or index expression").text;
  bool seen = false;
  for (const auto& n : names) seen = seen || n == name;
  if (!seen) names.push_back(name);
  return SizeExpr::sym(name);
}

int64_t ExprParser::int_literal() {
  if (peek().kind != TokKind::Number) fail_here("an integer");
  const Token& t = next();
  int64_t v = 0;
  auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (ec != std::errc() || end != t.text.data() + t.text.size())
    fail(t.span, "expected an integer that fits in 64 bits, found '" + t.text + "'");
  return v;
}

SizeExpr ExprParser::size(const char* what) {
  Span begin = peek().span;
  std::vector<std::string> names;
  SizeExpr e = int_sum(names, 0);
  for (const auto& n : names)
    if (!is_size_param(n))
      fail(span_from(begin), "unknown size parameter '" + n + "' in " + what +
                                 " (declare it in the function's [...] list)");
  return e;
}

// An affine index: linear in the enclosing domain's indices, with an offset
// over size parameters. Terms keep their textual order.
Affine ExprParser::affine(const std::set<std::string>& indices) {
  Span begin = peek().span;
  std::vector<std::string> names;
  SizeExpr e = int_sum(names, 0);
  Span at = span_from(begin);
  std::vector<std::string> used_indices;
  for (const auto& n : names) {
    if (indices.count(n))
      used_indices.push_back(n);
    else if (!is_size_param(n))
      fail(at, "'" + n + "' is neither an index of this statement nor a size parameter");
  }
  std::string why;
  std::optional<Affine> a = affine_in(e, used_indices, &why);
  if (!a) fail(at, why);
  return *a;
}

// ---- expressions -----------------------------------------------------------

Expr ExprParser::expr(const std::set<std::string>& indices, int depth) {
  if (depth > kMaxNesting) fail(peek().span, "expression nested too deeply");
  const Token& t = peek();
  if (t.kind == TokKind::Number || is_punct("-") || (t.kind == TokKind::Ident && is_punct(":", 1)))
    return constant();
  if (t.kind == TokKind::Value) return read(indices, depth);
  if (t.kind != TokKind::Ident) fail_here("an expression");
  if (t.text == "cast" && is_punct("<", 1)) {
    next();
    next();
    ElemType to = type_name_token();
    expect(">", "after the cast's type");
    expect("(", "after cast<...>");
    Expr a = expr(indices, depth + 1);
    expect(")", "to close the cast");
    return make_cast(a, to);
  }
  if (!is_punct("(", 1)) {
    const Token& name = next();
    if (!indices.count(name.text))
      fail(name.span, "'" + name.text + "' is not an index of this statement");
    return make_index(name.text);
  }
  const Token& op = next();
  next();  // '('
  if (op.text == "size") {
    SizeExpr s = size("a size expression");
    expect(")", "to close size(...)");
    return make_size(s);
  }
  std::vector<Expr> args;
  std::vector<Span> spans;
  do {
    spans.push_back(peek().span);
    args.push_back(expr(indices, depth + 1));
  } while (accept(","));
  expect(")", "to close " + op.text + "(...)");
  return operation(op, args, spans);
}

void ExprParser::expect_arity(const Token& op, const std::vector<Expr>& args, size_t n) {
  if (args.size() != n)
    fail(op.span, op.text + " takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s") +
                      ", found " + std::to_string(args.size()));
}

// Checks the builders' typing rules (builder.h) so they never assert.
Expr ExprParser::operation(const Token& op, const std::vector<Expr>& args,
                           const std::vector<Span>& spans) {
  UnOp u = UnOp::Neg;
  BinOp b = BinOp::Add;
  if (op.text == "select") {
    expect_arity(op, args, 3);
    if (args[0]->type != ElemType::Bool)
      fail(spans[0], "select condition must be bool, found " + tname(args[0]));
    if (args[1]->type != args[2]->type)
      fail(op.span, "select branches differ in type: " + tname(args[1]) + " and " + tname(args[2]));
    return make_select(args[0], args[1], args[2]);
  }
  if (lookup_op(op.text, all_unops, u)) {
    expect_arity(op, args, 1);
    if (u == UnOp::Not && args[0]->type != ElemType::Bool)
      fail(spans[0], "not takes a bool, found " + tname(args[0]));
    if (u != UnOp::Not && u != UnOp::Neg && u != UnOp::Abs && !is_float(args[0]->type))
      fail(spans[0], op.text + " takes a float, found " + tname(args[0]));
    return make_unary(u, args[0]);
  }
  if (lookup_op(op.text, all_binops, b)) {
    expect_arity(op, args, 2);
    if (args[0]->type != args[1]->type)
      fail(op.span, op.text + " of different types: " + tname(args[0]) + " and " + tname(args[1]));
    if (is_logical(b) && args[0]->type != ElemType::Bool)
      fail(op.span, op.text + " takes bools, found " + tname(args[0]));
    if (floats_only(b) && !is_float(args[0]->type))
      fail(op.span, op.text + " takes floats, found " + tname(args[0]));
    if (b == BinOp::Rem && !is_int(args[0]->type))
      fail(op.span, "rem takes integers, found " + tname(args[0]));
    return make_binary(b, args[0], args[1]);
  }
  fail(op.span, "unknown operation '" + op.text + "'");
}

// [-] (NUMBER | inf | nan | true | false) ':' TYPE
Expr ExprParser::constant() {
  Span begin = peek().span;
  std::string literal = accept("-") ? "-" : "";
  const Token& t = next();
  if (t.kind != TokKind::Number && t.kind != TokKind::Ident)
    fail(t.span, "expected a constant, found " + describe(t));
  literal += t.text;
  expect(":", "and a type after the constant " + literal);
  ElemType type = type_name_token();
  double value = 0;
  if (type == ElemType::Bool) {
    if (literal != "true" && literal != "false")
      fail(span_from(begin), "a bool constant is true or false, found '" + literal + "'");
    value = literal == "true" ? 1 : 0;
  } else {
    auto [end, ec] = std::from_chars(literal.data(), literal.data() + literal.size(), value);
    bool bad_word = t.kind == TokKind::Ident && t.text != "inf" && t.text != "nan";
    if (ec != std::errc() || end != literal.data() + literal.size() || bad_word)
      fail(span_from(begin), "malformed constant '" + literal + "'");
    // Range first: converting a double beyond int64 to int64 is undefined.
    if (!is_float(type) && !(value >= -9223372036854775808.0 && value < 9223372036854775808.0))
      fail(span_from(begin), "constant " + literal + " is out of the range of int64");
    if (!is_float(type) && value != double(int64_t(value)))
      fail(span_from(begin), "constant " + literal + " is not an integer");
  }
  return make_const(value, type);
}

Expr ExprParser::read(const std::set<std::string>& indices, int depth) {
  const Token& name = next();
  ValuePtr v = lookup(name);
  bool guarded = accept("?");
  expect("[", "after " + describe(name) + " (a read needs its indices, even if none)");
  // Each index: affine, or a computed one written {expression}.
  std::vector<Affine> idx;
  std::vector<Expr> computed;
  if (!is_punct("]")) {
    do {
      computed.emplace_back();
      if (!accept("{")) {
        idx.push_back(affine(indices));
        continue;
      }
      Span begin = peek().span;
      computed.back() = expr(indices, depth + 1);
      if (computed.back()->type != ElemType::I64)
        fail(span_from(begin), "a computed index must be int64, not " +
                                   std::string(type_name(computed.back()->type)));
      if (linear_form(computed.back()))
        fail(span_from(begin), "this computed index is affine: write it without braces");
      idx.push_back(affine_const(0));
      expect("}", "after a computed index");
    } while (accept(","));
  }
  expect("]", "after the indices of " + describe(name));
  if (int(idx.size()) != v->rank())
    fail(span_from(name.span), "read of %" + v->name + " has " + std::to_string(idx.size()) +
                                   " indices, but it has rank " + std::to_string(v->rank()));
  return make_read(v, std::move(idx), std::move(computed), guarded);
}

// ---- values and types -------------------------------------------------------

ElemType ExprParser::type_name_token() {
  const Token& t = expect_ident("a type name (float32, int64, ...)");
  auto type = parse_type_name(t.text);
  if (!type) fail(t.span, "unknown type '" + t.text + "'");
  return *type;
}

// [layout(d0, d1, ...)], checked against the rank later (check_layout).
std::vector<int> ExprParser::layout_suffix() {
  std::vector<int> layout;
  if (!is_word("layout")) return layout;
  next();
  expect("(", "after layout");
  do {
    Span at = peek().span;
    int64_t d = int_literal();
    if (d < 0 || d > 1024) fail(at, "layout entry out of range");
    layout.push_back(int(d));
  } while (accept(","));
  expect(")", "to close layout(...)");
  return layout;
}

void ExprParser::check_layout(const std::vector<int>& layout, int rank, Span at) {
  if (layout.empty()) return;
  std::set<int> dims(layout.begin(), layout.end());
  if (int(layout.size()) != rank || int(dims.size()) != rank || *dims.rbegin() != rank - 1)
    fail(at, "layout is not a permutation of the " + std::to_string(rank) + " dimensions");
}

TypeSpec ExprParser::type_spec() {
  TypeSpec t;
  Span begin = peek().span;
  t.type = type_name_token();
  expect("[", "after the element type (a scalar is written float32[])");
  if (!is_punct("]")) {
    do t.shape.push_back(size("a shape"));
    while (accept(","));
  }
  expect("]", "to close the shape");
  if (t.shape.size() > size_t(kMaxIndices))
    fail(span_from(begin), "rank " + std::to_string(t.shape.size()) + ", the limit is " +
                               std::to_string(kMaxIndices));
  t.layout = layout_suffix();
  check_layout(t.layout, int(t.shape.size()), span_from(begin));
  return t;
}

ValuePtr ExprParser::lookup(const Token& name) {
  for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
    auto it = s->find(name.text);
    if (it != s->end()) return it->second;
  }
  fail(name.span, names_.count(name.text)
                      ? "%" + name.text + " is not visible here (defined in a loop body?)"
                      : "%" + name.text + " is not defined");
}

}  // namespace tenet::ir
