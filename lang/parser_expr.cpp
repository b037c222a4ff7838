// The expression half of the parser (grammar in ast.h): precedence climbing
// over five binary levels, then unary operators and primaries. Every node is
// built through finish(), which bounds the tree height.
#include "lang/parser_impl.h"

namespace tenet::lang::parsing {

using ast::Expr;
using ast::ExprKind;
using ast::ExprPtr;
using K = TokenKind;

namespace {

// Binary operator levels, loosest first; comparisons do not chain.
constexpr int kOrLevel = 0, kAndLevel = 1, kCompareLevel = 2, kAddLevel = 3, kMulLevel = 4;
constexpr int kUnaryLevel = 5;

const char* comparison_op(K kind) {
  switch (kind) {
    case K::Less:
      return "<";
    case K::LessEq:
      return "<=";
    case K::Greater:
      return ">";
    case K::GreaterEq:
      return ">=";
    case K::EqEq:
      return "==";
    case K::NotEq:
      return "!=";
    default:
      return nullptr;
  }
}

const char* binary_op_at(int level, K kind) {
  switch (level) {
    case kOrLevel:
      return kind == K::OrOr ? "||" : nullptr;
    case kAndLevel:
      return kind == K::AndAnd ? "&&" : nullptr;
    case kCompareLevel:
      return comparison_op(kind);
    case kAddLevel:
      return kind == K::Plus ? "+" : kind == K::Minus ? "-" : nullptr;
    case kMulLevel:
      return kind == K::Star ? "*" : kind == K::Slash ? "/" : kind == K::Percent ? "%" : nullptr;
    default:
      return nullptr;
  }
}

bool is_assign_op(K kind) {
  return kind == K::Assign || kind == K::SumReduce || kind == K::MaxReduce ||
         kind == K::MinReduce || kind == K::ProdReduce || kind == K::Accumulate ||
         kind == K::MaxAccumulate || kind == K::MinAccumulate || kind == K::ProdAccumulate;
}

std::string too_deep() {
  return "expression nested too deeply (the limit is " + std::to_string(kMaxNesting) + " levels)";
}

ExprPtr node(ExprKind kind, Span span) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->span = span;
  return e;
}

std::string arguments_text(size_t n) {
  return std::to_string(n) + (n == 1 ? " argument" : " arguments");
}

}  // namespace

bool starts_expression(K kind) {
  return kind == K::Number || kind == K::Name || kind == K::Type || kind == K::LParen ||
         kind == K::Minus || kind == K::Not;
}

bool is_binary_op(K kind) {
  for (int level = kOrLevel; level < kUnaryLevel; ++level)
    if (binary_op_at(level, kind)) return true;
  return false;
}

// expr := or ['?' expr ':' expr]: the ternary binds loosest and nests to the
// right (`a ? b : c ? d : e`). It is lowered as select (check: types.cpp).
Parsed Parser::expr() {
  Parsed cond = binary(kOrLevel);
  if (!at(K::Question)) return cond;
  struct NestingGuard {
    int& depth;
    ~NestingGuard() { --depth; }
  } guard{++nesting_};
  const Token& question = advance();
  if (nesting_ > kMaxNesting) fail(question, too_deep());
  Parsed then = expr();
  expect(K::Colon, "':' of the conditional expression", {{question.span, "'?' is here"}});
  Parsed otherwise = expr();
  ExprPtr e = node(ExprKind::Ternary, Span::join(cond.expr->span, otherwise.expr->span));
  std::vector<Parsed> args;
  args.push_back(std::move(cond));
  args.push_back(std::move(then));
  args.push_back(std::move(otherwise));
  return finish(std::move(e), std::move(args));
}

void Parser::match_parentheses() {
  closing_.assign(tokens_.size(), kNoMatch);
  std::vector<size_t> open;
  for (size_t i = 0; i < tokens_.size(); ++i) {
    if (tokens_[i].kind == K::LParen) open.push_back(i);
    if (tokens_[i].kind == K::RParen && !open.empty()) {
      closing_[open.back()] = i;
      open.pop_back();
    }
  }
}

// Whether the '(' at the current token and its ')' are followed by an
// assignment operator, i.e. start the next statement `(a, b) = f(x)`. An
// expression never continues that way, so in `s = x (a, b) = f(s)` the name x
// ends the first statement: statements need no separator.
bool Parser::left_side_follows() const {
  if (!at(K::LParen)) return false;
  size_t close = closing_[pos_];
  return close != kNoMatch && close + 1 < tokens_.size() && is_assign_op(tokens_[close + 1].kind);
}

// Attaches the children and checks the height of the tree.
Parsed Parser::finish(ExprPtr e, std::vector<Parsed> args) {
  int height = 1;
  for (Parsed& a : args) {
    height = std::max(height, a.height + 1);
    e->args.push_back(std::move(a.expr));
  }
  if (height > kMaxNesting) fail_at(file_, e->span, too_deep());
  return Parsed{std::move(e), height};
}

Parsed Parser::binary(int level) {
  if (level == kUnaryLevel) return unary();
  Parsed lhs = binary(level + 1);
  while (const char* op = binary_op_at(level, peek().kind)) {
    advance();
    Parsed rhs = binary(level + 1);
    ExprPtr e = node(ExprKind::Binary, Span::join(lhs.expr->span, rhs.expr->span));
    e->op = op;
    std::vector<Parsed> args;
    args.push_back(std::move(lhs));
    args.push_back(std::move(rhs));
    lhs = finish(std::move(e), std::move(args));
    if (level == kCompareLevel && comparison_op(peek().kind))
      fail(peek(), "comparisons cannot be chained; combine them with '&&'");
  }
  return lhs;
}

Parsed Parser::unary() {
  // Every nested parenthesis, argument list or unary operator passes through
  // here, so this one counter bounds the parser's recursion.
  struct NestingGuard {
    int& depth;
    ~NestingGuard() { --depth; }
  } guard{++nesting_};
  if (nesting_ > kMaxNesting) fail(peek(), too_deep());
  if (at(K::Minus) || at(K::Not)) {
    const Token& op = advance();
    Parsed operand = unary();
    ExprPtr e = node(ExprKind::Unary, Span::join(op.span, operand.expr->span));
    e->op = std::string(op.text);
    std::vector<Parsed> args;
    args.push_back(std::move(operand));
    return finish(std::move(e), std::move(args));
  }
  return primary();
}

Parsed Parser::primary() {
  const Token& t = peek();
  switch (t.kind) {
    case K::Number: {
      advance();
      ExprPtr e = node(ExprKind::Number, t.span);
      e->number = t.number;
      e->is_integer = t.is_integer;
      return Parsed{std::move(e), 1};
    }
    case K::Name:
      return name_or_call();
    case K::Type: {
      advance();
      const Token& open =
          expect(K::LParen, "'(' after the type " + quote(t.text) + " (a cast is written " +
                                quote(std::string(t.text) + "(e)") + ")");
      std::vector<Parsed> args = arguments(open, "an argument of " + quote(t.text));
      ExprPtr e = node(ExprKind::Cast, span_from(t.span.begin));
      e->name_span = t.span;
      e->cast_to = t.type;
      if (args.size() != 1)
        fail_at(file_, e->span,
                "a cast to " + quote(t.text) + " takes 1 argument, " + std::to_string(args.size()) +
                    " given");
      return finish(std::move(e), std::move(args));
    }
    case K::LParen: {
      const Token& open = advance();
      Parsed inner = expr();
      expect(K::RParen, "')'", {to_match(open)});
      inner.expr->span = span_from(open.span.begin);  // the parentheses belong to it
      return inner;
    }
    default:
      expected("an expression");
  }
}

// NAME, NAME(args), NAME?(args) or BUILTIN(args).
Parsed Parser::name_or_call() {
  const Token& name = advance();
  std::string text(name.text);
  bool ends_here = left_side_follows();
  if (!ends_here && at(K::LParen) && text == ast::kReshape)
    fail_at(file_, name.span,
            "'reshape' is a statement of its own: 'y = reshape(x, sizes...)', not part of an "
            "expression");
  if (!ends_here && at(K::LParen) && ast::is_builtin(text)) {
    std::vector<Parsed> args = arguments(advance(), "an argument of " + quote(text));
    ExprPtr e = node(ExprKind::Builtin, span_from(name.span.begin));
    e->name = text;
    e->name_span = name.span;
    size_t arity = size_t(ast::builtin_arity(text));
    if (args.size() != arity)
      fail_at(file_, e->span,
              quote(text) + " takes " + arguments_text(arity) + ", " + std::to_string(args.size()) +
                  " given");
    return finish(std::move(e), std::move(args));
  }
  // `x?(i)` is a guarded read only written without a space before '?';
  // `c ? (a) : b` is a conditional expression.
  bool guarded =
      !ends_here && at(K::Question) && peek().span.begin == name.span.end && accept(K::Question);
  if (guarded || (!ends_here && at(K::LParen))) {
    const Token& open = expect(K::LParen, "'(' after " + quote(text + "?"));
    std::vector<Parsed> args = arguments(open, "an index of " + quote(text));
    ExprPtr e = node(ExprKind::Access, span_from(name.span.begin));
    e->name = text;
    e->name_span = name.span;
    e->guarded = guarded;
    return finish(std::move(e), std::move(args));
  }
  ExprPtr e = node(ExprKind::Name, name.span);
  e->name = text;
  e->name_span = name.span;
  return Parsed{std::move(e), 1};
}

// After '(': [expr (',' expr)*] ')'.
std::vector<Parsed> Parser::arguments(const Token& open, const std::string& what) {
  std::vector<Parsed> args;
  if (accept(K::RParen)) return args;
  do args.push_back(expr());
  while (accept(K::Comma));
  expect(K::RParen, "',' or ')' after " + what, {to_match(open)});
  return args;
}

}  // namespace tenet::lang::parsing
