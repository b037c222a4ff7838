// Recursive-descent parser for the grammar in ast.h: functions and statements
// here, expressions in parser_expr.cpp. One token of lookahead, two where a
// name must be told apart from a call; the only global knowledge is the set of
// `def` names, collected up front so that a call may precede its definition.
#include "lang/parser.h"

#include "lang/parser_impl.h"

namespace tenet::lang {

namespace parsing {

using ast::ExprKind;
using ast::Ident;
using ast::Stmt;
using ast::StmtKind;
using ast::StmtPtr;

Parser::Parser(const SourceFile& file) : file_(file), tokens_(lex(file)) {
  for (size_t i = 0; i + 1 < tokens_.size(); ++i)
    if (tokens_[i].kind == K::KwDef && tokens_[i + 1].kind == K::Name)
      def_names_.insert(tokens_[i + 1].text);
  match_parentheses();
}

ast::File Parser::program() {
  ast::File program;
  while (!at(K::End)) {
    if (!at(K::KwDef)) expected("'def' to start a function");
    program.functions.push_back(function());
  }
  return program;
}

// ---- errors ---------------------------------------------------------------

void Parser::fail(const Token& t, const std::string& message, std::vector<Note> notes) {
  if (t.kind == K::Error) fail_at(file_, t.span, t.error);  // the lexer's message wins
  fail_at(file_, t.span, message, std::move(notes));
}

void Parser::expected(const std::string& what, std::vector<Note> notes) {
  const Token& t = peek();
  if (t.kind == K::End) fail(t, "expected " + what + " at end of file", std::move(notes));
  fail(t, "expected " + what + ", found " + describe(t), std::move(notes));
}

const Token& Parser::expect(K kind, const std::string& what, std::vector<Note> notes) {
  if (!at(kind)) expected(what, std::move(notes));
  return advance();
}

Note Parser::to_match(const Token& open) {
  return Note{open.span, "to match this " + quote(open.text)};
}

Ident Parser::ident(const std::string& what) {
  const Token& t = expect(K::Name, what);
  return Ident{std::string(t.text), t.span};
}

// A tensor must not be named like a builtin: `exp(i)` always calls exp.
void Parser::check_tensor_name(const Ident& name) {
  if (ast::is_builtin(name.name))
    fail_at(file_, name.span, quote(name.name) + " is a builtin function and cannot name a tensor");
}

// ---- functions ------------------------------------------------------------

ast::Function Parser::function() {
  ast::Function f;
  const Token& def = advance();
  f.name = ident("a function name after 'def'");
  std::string of = " of " + quote(f.name.name);
  const Token& open = expect(K::LParen, "'(' after the function name " + quote(f.name.name));
  if (!at(K::RParen)) {
    do f.params.push_back(param());
    while (accept(K::Comma));
  }
  expect(K::RParen, "',' or ')' after a parameter" + of, {to_match(open)});
  expect(K::Arrow, "'->' after the parameters" + of);
  const Token& out_open = expect(K::LParen, "'(' to start the outputs" + of);
  do f.outputs.push_back(output());
  while (accept(K::Comma));
  expect(K::RParen, "',' or ')' after an output" + of, {to_match(out_open)});
  const Token& brace = expect(K::LBrace, "'{' to start the body" + of);
  f.body = block(brace, 0);
  f.span = span_from(def.span.begin);
  return f;
}

ast::Param Parser::param() {
  ast::Param p;
  if (!at(K::Type)) expected("a parameter type (float32, int64, ...)");
  const Token& type = advance();
  p.type = type.type;
  p.type_span = type.span;
  p.scalar = !at(K::LParen);
  if (!p.scalar) p.dims = dims(advance());
  p.name = ident("a parameter name after its type");
  check_tensor_name(p.name);
  return p;
}

ast::Output Parser::output() {
  ast::Output o;
  if (at(K::Type)) {
    const Token& type = advance();
    o.declared = true;
    o.type = type.type;
    o.dims =
        dims(expect(K::LParen, "'(' and the dimensions after the output type " + quote(type.text)));
  }
  o.name = ident(o.declared ? "an output name after its shape" : "an output name");
  check_tensor_name(o.name);
  return o;
}

// After '(': [dim (',' dim)*] ')'.
std::vector<ast::Dim> Parser::dims(const Token& open) {
  std::vector<ast::Dim> result;
  if (accept(K::RParen)) return result;
  do {
    const Token& t = peek();
    if (t.kind == K::Name) {
      result.push_back(ast::Dim{std::string(t.text), 0, t.span});
    } else if (t.kind == K::Number && t.is_integer) {
      if (t.number > 1e15) fail(t, "dimension " + describe(t) + " is too large");
      result.push_back(ast::Dim{"", int64_t(t.number), t.span});
    } else {
      expected("a dimension (a size name or an integer)");
    }
    advance();
  } while (accept(K::Comma));
  expect(K::RParen, "',' or ')' after a dimension", {to_match(open)});
  return result;
}

// ---- statements -----------------------------------------------------------

// Statements up to the '}' that closes `open` (consumed).
std::vector<StmtPtr> Parser::block(const Token& open, int depth) {
  std::vector<StmtPtr> body;
  while (true) {
    while (accept(K::Semicolon)) {
    }
    if (accept(K::RBrace)) return body;
    if (at(K::End)) expected("'}'", {to_match(open)});
    if (!at(K::Name) && !at(K::LParen) && !at(K::KwFor))
      expected("a statement or '}'", {to_match(open)});
    body.push_back(statement(depth));
  }
}

StmtPtr Parser::statement(int depth) {
  if (at(K::KwFor)) return for_loop(depth);
  if (at(K::LParen)) return tuple_call();
  return assignment();
}

StmtPtr Parser::for_loop(int depth) {
  const Token& kw = advance();
  if (depth + 1 > kMaxNesting)
    fail(kw, "for loops nested too deeply (the limit is " + std::to_string(kMaxNesting) + ")");
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::For;
  s->var = ident("a loop variable after 'for'");
  std::string of = " of the loop over " + quote(s->var.name);
  expect(K::KwIn, "'in' after the loop variable " + quote(s->var.name));
  s->lo = expr().expr;
  expect(K::Colon, "':' between the bounds" + of);
  s->hi = expr().expr;
  const Token& brace = expect(K::LBrace, "'{' to start the body" + of);
  s->body = block(brace, depth + 1);
  s->span = span_from(kw.span.begin);
  return s;
}

// (a, b) = f(x, y)
StmtPtr Parser::tuple_call() {
  const Token& open = advance();
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::Call;
  do {
    s->results.push_back(ident("a result name in a parenthesised left side"));
    check_tensor_name(s->results.back());
  } while (accept(K::Comma));
  expect(K::RParen, "',' or ')' after a result name", {to_match(open)});
  std::string lhs(file_.slice(span_from(open.span.begin)));
  if (!at(K::Assign))
    expected("'=' after " + quote(lhs) + " (a parenthesised left side takes a call)");
  s->op_span = advance().span;
  const Token& callee = peek();
  if (callee.kind == K::Name && !def_names_.count(callee.text))
    fail(callee, quote(lhs + " =") + " takes a call of a function defined in this file; " +
                     quote(callee.text) + " is not one");
  if (callee.kind != K::Name)
    expected("a call of a function defined in this file after " + quote(lhs + " ="));
  call_rest(*s);
  s->span = span_from(open.span.begin);
  return s;
}

namespace {

bool assign_op_of(TokenKind kind, ast::AssignOp& op) {
  switch (kind) {
    case TokenKind::Assign:
      op = ast::AssignOp::Assign;
      return true;
    case TokenKind::SumReduce:
      op = ast::AssignOp::SumReduce;
      return true;
    case TokenKind::MaxReduce:
      op = ast::AssignOp::MaxReduce;
      return true;
    case TokenKind::MinReduce:
      op = ast::AssignOp::MinReduce;
      return true;
    case TokenKind::ProdReduce:
      op = ast::AssignOp::ProdReduce;
      return true;
    case TokenKind::Accumulate:
      op = ast::AssignOp::Accumulate;
      return true;
    case TokenKind::MaxAccumulate:
      op = ast::AssignOp::MaxAccumulate;
      return true;
    case TokenKind::MinAccumulate:
      op = ast::AssignOp::MinAccumulate;
      return true;
    case TokenKind::ProdAccumulate:
      op = ast::AssignOp::ProdAccumulate;
      return true;
    default:
      return false;
  }
}

}  // namespace

// target[(i, j)] op value [where ...], or target = f(x, y) with f a def.
StmtPtr Parser::assignment() {
  const Token& first = peek();
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::Assign;
  s->target = ident("a statement");
  check_tensor_name(s->target);
  bool has_parens = at(K::LParen);
  if (has_parens) lhs_indices(*s, advance());
  if (!assign_op_of(peek().kind, s->op))
    expected(std::string(has_parens ? "an assignment operator" : "'(' or an assignment operator") +
             " ('=', '+=!', 'max=!', 'min=!', '*=!', '+=', 'max=', 'min=' or '*=') after " +
             quote(file_.slice(span_from(first.span.begin))));
  s->op_span = advance().span;
  const bool reshape = at(K::Name) && peek().text == ast::kReshape;
  if (s->op == ast::AssignOp::Assign && !has_parens && at(K::Name) &&
      (reshape || def_names_.count(peek().text)) && peek(1).kind == K::LParen) {
    s->kind = StmtKind::Call;
    s->results.push_back(std::move(s->target));
    s->target = Ident{};
    if (reshape)
      reshape_rest(*s);
    else
      call_rest(*s);
    s->span = span_from(first.span.begin);
    return s;
  }
  s->value = expr().expr;
  equivalent(*s);
  if (accept(K::KwWhere)) {
    do where_clause(*s);
    while (accept(K::Comma));
  }
  equivalent(*s);  // also accepted after the where clause
  s->span = span_from(first.span.begin);
  return s;
}

// TC's reduction hint `<=> name(args)`: kept in the tree (and printed), but
// ignored; the checker warns about it (lang/check.h, Checked::warnings).
void Parser::equivalent(Stmt& s) {
  if (s.equivalent || !at(K::Equivalent)) return;
  const Token& op = advance();
  s.equivalent = expr().expr;
  s.equivalent_span = span_from(op.span.begin);
}

// After "target(": index names up to ')' (consumed).
void Parser::lhs_indices(Stmt& s, const Token& open) {
  if (accept(K::RParen)) return;
  do {
    const Token& t = peek();
    if (t.kind == K::Name && (peek(1).kind == K::Comma || peek(1).kind == K::RParen)) {
      s.indices.push_back(Ident{std::string(t.text), t.span});
      advance();
      continue;
    }
    if (!starts_expression(t.kind)) expected("an index name", {to_match(open)});
    Parsed e = expr();
    if (e.expr->kind == ExprKind::Number) {
      // TC's `C(0) +=! ...` defines one element only; Tenet defines whole tensors.
      std::string target = quote(s.target.name);
      fail_at(file_, e.expr->span,
              "a constant index on the left of " + target +
                  " is not supported: a statement defines every element of its target",
              {{e.expr->span, "for a dimension of size 1, use an index: '" + s.target.name +
                                  "(..., j, ...) ... where j in 0:1'; to change one element "
                                  "of an existing tensor, redefine it with select: '" +
                                  s.target.name + "(..., j, ...) = select(j == " +
                                  std::string(file_.slice(e.expr->span)) + ", VALUE, " +
                                  s.target.name + "(..., j, ...))'"}});
    }
    if (e.expr->kind != ExprKind::Name)
      fail_at(file_, e.expr->span, "the left side takes index names only",
              {shifted_target(s, *e.expr)});
    expected("',' or ')' after the index " + quote(e.expr->name) + " of " + quote(s.target.name),
             {to_match(open)});
  } while (accept(K::Comma));
  expect(K::RParen, "',' or ')' after the indices of " + quote(s.target.name), {to_match(open)});
}

// The rewrite of an index expression on the left: TC's `O(i + 1) = E`
// stores O from 1 on (an output range that does not start at 0) and hands
// the caller O's elements counted from 0, which are `O(i) = E` in Tenet;
// reads of O in TC's numbering, `O(e)`, become `O(e - 1)`.
Note Parser::shifted_target(const ast::Stmt& s, const ast::Expr& e) const {
  const ast::Expr* name = e.args.size() == 2 ? e.args[0].get() : nullptr;
  if (e.kind != ExprKind::Binary || (e.op != "+" && e.op != "-") || !name ||
      name->kind != ExprKind::Name)
    return {e.span, "name each dimension of " + quote(s.target.name) +
                        " with an index; index expressions go in the reads on the right"};
  const ast::Expr& offset = *e.args[1];
  std::string k(file_.slice(offset.span));
  if (offset.kind != ExprKind::Number && offset.kind != ExprKind::Name) k = "(" + k + ")";
  const std::string& o = s.target.name;
  return {e.span, "a tensor's indices start at 0 (TC would offset the output): write '" + o + "(" +
                      name->name + ")' with the same right side, and read '" + o + "(e " +
                      (e.op == "+" ? "- " : "+ ") + k + ")' where TC reads '" + o + "(e)'"};
}

// At "reshape(x, sizes...)" after '=': the tensor, then the new sizes
// (checked as size expressions by the checker).
void Parser::reshape_rest(Stmt& s) {
  const Token& name = advance();
  s.callee = Ident{std::string(name.text), name.span};
  const Token& open = advance();  // '(': the caller looked
  s.args.push_back(ident("the name of the tensor to reshape"));
  while (accept(K::Comma)) {
    if (!starts_expression(peek().kind)) expected("a size of the reshape", {to_match(open)});
    s.sizes.push_back(expr().expr);
  }
  expect(K::RParen, "',' or ')' after the sizes of 'reshape'", {to_match(open)});
  if (at(K::KwWhere)) fail(peek(), "a reshape takes no 'where' clause");
}

// At "f(x, y)" after '=', f a def: fills callee and args.
void Parser::call_rest(Stmt& s) {
  const Token& name = advance();
  s.callee = Ident{std::string(name.text), name.span};
  const Token& open = expect(K::LParen, "'(' after the function name " + quote(name.text));
  if (!accept(K::RParen)) {
    do {
      const Token& t = peek();
      if (t.kind == K::Name && (peek(1).kind == K::Comma || peek(1).kind == K::RParen)) {
        s.args.push_back(Ident{std::string(t.text), t.span});
        advance();
        continue;
      }
      if (!starts_expression(t.kind)) expected("a tensor name", {to_match(open)});
      Parsed e = expr();
      if (e.expr->kind != ExprKind::Name)
        fail_at(file_, e.expr->span,
                "the arguments of a call to " + quote(name.text) + " must be tensor names");
      expected("',' or ')' after an argument of " + quote(name.text), {to_match(open)});
    } while (accept(K::Comma));
    expect(K::RParen, "',' or ')' after the arguments of " + quote(name.text), {to_match(open)});
  }
  if (at(K::KwWhere)) fail(peek(), "a call statement takes no 'where' clause");
  if (is_binary_op(peek().kind) || at(K::Question))
    fail(peek(), "a call of " + quote(name.text) + " must be the whole right side of '='");
}

// `i in lo:hi`, `exists X(i, ...)`; TC's let-binding `k = i + j` is refused.
void Parser::where_clause(ast::Stmt& s) {
  const Token& t = peek();
  if (t.kind == K::Name && t.text == "exists" && peek(1).kind == K::Name) {
    advance();
    Parsed e = expr();
    if (e.expr->kind != ExprKind::Access || e.expr->guarded)
      fail_at(file_, e.expr->span,
              "'where exists' takes a read of a tensor, such as 'exists x(i, k)'");
    s.exists.push_back(std::move(e.expr));
    return;
  }
  if (t.kind == K::Name && peek(1).kind == K::Assign)
    fail_at(file_, t.span,
            "let-bindings in a where clause are not supported: write the expression in place "
            "of " +
                quote(std::string(t.text)),
            {{t.span,
              "an index in a where clause takes a range: '" + std::string(t.text) + " in lo:hi'"}});
  s.where.push_back(range_clause());
}

ast::RangeClause Parser::range_clause() {
  ast::RangeClause r;
  r.index = ident("an index name in a 'where' clause");
  expect(K::KwIn, "'in' after " + quote(r.index.name) + " in a 'where' clause");
  r.lo = expr().expr;
  expect(K::Colon, "':' between the bounds of " + quote(r.index.name));
  r.hi = expr().expr;
  r.span = span_from(r.index.span.begin);
  return r;
}

}  // namespace parsing

ast::File parse(const SourceFile& file) {
  return parsing::Parser(file).program();
}

}  // namespace tenet::lang
