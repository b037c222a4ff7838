// The lexer and the parser, construct by construct: token kinds and values,
// the shape of the AST, and the exact source text behind every span.
#include <gtest/gtest.h>

#include <string>

#include "lang/ast.h"
#include "lang/lexer.h"
#include "lang/parser.h"

namespace tenet::lang {
namespace {

using ast::AssignOp;
using ast::Expr;
using ast::ExprKind;
using ast::StmtKind;

// An S-expression of the tree: "(+ a (* b c))", "x?(i)", "exp(a)", "(float64 a)".
std::string sexpr(const Expr& e) {
  auto list = [&](std::string head) {
    for (const auto& a : e.args) head += " " + sexpr(*a);
    return "(" + head + ")";
  };
  switch (e.kind) {
    case ExprKind::Number: {
      std::string s = std::to_string(e.number);
      s.erase(s.find_last_not_of('0') + 1);
      if (s.back() == '.') s.pop_back();
      return s + (e.is_integer ? "" : "f");
    }
    case ExprKind::Name:
      return e.name;
    case ExprKind::Access:
      return list(e.name + (e.guarded ? "?" : "") + "@");
    case ExprKind::Builtin:
      return list(e.name);
    case ExprKind::Unary:
      return list("u" + e.op);
    case ExprKind::Binary:
      return list(e.op);
    case ExprKind::Cast:
      return list(std::string(type_name(e.cast_to)));
    case ExprKind::Ternary:
      return list("?:");
  }
  return "?";
}

// Parses `def f(...) -> (y) { <body> }` and returns the program.
struct Parsed {
  SourceFile file;
  ast::File program;
};
Parsed parse_text(const std::string& text) {
  Parsed p{SourceFile("test.tn", text), {}};
  p.program = parse(p.file);
  return p;
}
Parsed parse_body(const std::string& body) {
  return parse_text("def f(float(N) x, float(N, M) w) -> (y) {\n" + body + "\n}\n");
}
std::string expr_of(const std::string& rhs) {
  Parsed p = parse_body("y = " + rhs);
  return sexpr(*p.program.functions.at(0).body.at(0)->value);
}

std::vector<TokenKind> kinds(const std::string& text) {
  SourceFile file("t.tn", text);
  std::vector<TokenKind> out;
  for (const Token& t : lex(file)) out.push_back(t.kind);
  return out;
}

TEST(Lexer, Operators) {
  using K = TokenKind;
  EXPECT_EQ(kinds("+ - * / < <= > >= == != && || ! = += +=! max=! min=! -> ( ) { } , : ; ?"),
            (std::vector<K>{K::Plus,      K::Minus,     K::Star,      K::Slash,  K::Less,
                            K::LessEq,    K::Greater,   K::GreaterEq, K::EqEq,   K::NotEq,
                            K::AndAnd,    K::OrOr,      K::Not,       K::Assign, K::Accumulate,
                            K::SumReduce, K::MaxReduce, K::MinReduce, K::Arrow,  K::LParen,
                            K::RParen,    K::LBrace,    K::RBrace,    K::Comma,  K::Colon,
                            K::Semicolon, K::Question,  K::End}));
  // max=! is one token only when written together; max alone is a name.
  EXPECT_EQ(kinds("max =! maxi=!"),
            (std::vector<K>{K::Name, K::Assign, K::Not, K::Name, K::Assign, K::Not, K::End}));
  EXPECT_EQ(kinds("def for in where float int64 double exp x_1 # comment = ignored\n_y"),
            (std::vector<K>{K::KwDef, K::KwFor, K::KwIn, K::KwWhere, K::Type, K::Type, K::Type,
                            K::Name, K::Name, K::Name, K::End}));
}

TEST(Lexer, Numbers) {
  SourceFile file("t.tn", "123 1.5 .5 1e-7 2.5E+3 7.");
  std::vector<Token> t = lex(file);
  ASSERT_EQ(t.size(), 7u);
  EXPECT_EQ(t[0].number, 123);
  EXPECT_TRUE(t[0].is_integer);
  EXPECT_EQ(t[1].number, 1.5);
  EXPECT_EQ(t[2].number, 0.5);
  EXPECT_EQ(t[3].number, 1e-7);
  EXPECT_EQ(t[4].number, 2500);
  EXPECT_EQ(t[5].number, 7);
  for (int i = 1; i <= 5; ++i) EXPECT_FALSE(t[i].is_integer) << i;
  EXPECT_EQ(file.slice(t[4].span), "2.5E+3");
  EXPECT_EQ(t[6].kind, TokenKind::End);
  EXPECT_EQ(t[6].span.begin, file.text().size());
}

TEST(Lexer, StopsAtTheFirstBadCharacter) {
  SourceFile file("t.tn", "a 1e+ b $");
  std::vector<Token> t = lex(file);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1].kind, TokenKind::Error);
  EXPECT_EQ(t[1].error, "malformed number '1e+': the exponent has no digits");
  EXPECT_EQ(file.slice(t[1].span), "1e+");
}

TEST(Lexer, EndSitsAfterTheLastToken) {
  SourceFile file("t.tn", "a # trailing comment\n\n\n");
  std::vector<Token> t = lex(file);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1].span.begin, 1u);
  EXPECT_EQ(describe(t[1]), "end of file");
  EXPECT_EQ(describe(t[0]), "'a'");
}

TEST(Parser, FunctionHeader) {
  Parsed p = parse_text(
      "def f(float(B, 3) x, int32(B) labels, double lr, float() z) -> (y, float64(B, 4) w) {}");
  ASSERT_EQ(p.program.functions.size(), 1u);
  const ast::Function& f = p.program.functions[0];
  EXPECT_EQ(f.name.name, "f");
  EXPECT_EQ(p.file.slice(f.span), p.file.text());
  ASSERT_EQ(f.params.size(), 4u);
  EXPECT_EQ(f.params[0].type, ElemType::F32);
  EXPECT_FALSE(f.params[0].scalar);
  ASSERT_EQ(f.params[0].dims.size(), 2u);
  EXPECT_EQ(f.params[0].dims[0].name, "B");
  EXPECT_EQ(f.params[0].dims[1].name, "");
  EXPECT_EQ(f.params[0].dims[1].value, 3);
  EXPECT_EQ(p.file.slice(f.params[0].dims[1].span), "3");
  EXPECT_EQ(p.file.slice(f.params[0].type_span), "float");
  EXPECT_EQ(f.params[1].type, ElemType::I32);
  EXPECT_EQ(f.params[1].name.name, "labels");
  EXPECT_EQ(p.file.slice(f.params[1].name.span), "labels");
  EXPECT_EQ(f.params[2].type, ElemType::F64);
  EXPECT_TRUE(f.params[2].scalar);
  EXPECT_TRUE(f.params[2].dims.empty());
  EXPECT_FALSE(f.params[3].scalar);  // float() z: rank 0, written with parentheses
  EXPECT_TRUE(f.params[3].dims.empty());
  ASSERT_EQ(f.outputs.size(), 2u);
  EXPECT_FALSE(f.outputs[0].declared);
  EXPECT_EQ(f.outputs[0].name.name, "y");
  EXPECT_TRUE(f.outputs[1].declared);
  EXPECT_EQ(f.outputs[1].type, ElemType::F64);
  EXPECT_EQ(f.outputs[1].dims.size(), 2u);
  EXPECT_TRUE(f.body.empty());
}

TEST(Parser, AssignmentOperators) {
  Parsed p = parse_body(
      "y(i) = x(i)\n a(i) +=! w(i, j)\n b(i) max=! w(i, j); c(i) min=! w(i, j)"
      "\n y(i) += x(i)");
  const auto& body = p.program.functions[0].body;
  ASSERT_EQ(body.size(), 5u);
  AssignOp ops[] = {AssignOp::Assign, AssignOp::SumReduce, AssignOp::MaxReduce, AssignOp::MinReduce,
                    AssignOp::Accumulate};
  const char* texts[] = {"=", "+=!", "max=!", "min=!", "+="};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(body[i]->kind, StmtKind::Assign);
    EXPECT_EQ(body[i]->op, ops[i]);
    EXPECT_EQ(p.file.slice(body[i]->op_span), texts[i]);
    EXPECT_STREQ(ast::assign_op_text(body[i]->op), texts[i]);
  }
  EXPECT_EQ(p.file.slice(body[1]->span), "a(i) +=! w(i, j)");
  EXPECT_EQ(p.file.slice(body[2]->span), "b(i) max=! w(i, j)");  // without the ';'
  EXPECT_EQ(body[1]->target.name, "a");
  ASSERT_EQ(body[1]->indices.size(), 1u);
  EXPECT_EQ(body[1]->indices[0].name, "i");
  EXPECT_EQ(p.file.slice(body[1]->indices[0].span), "i");
}

TEST(Parser, WhereClauses) {
  Parsed p = parse_body("y(i) = x(2*i + k) where i in 0:N/2, k in 0:2\nz = 1");
  const auto& s = *p.program.functions[0].body[0];
  ASSERT_EQ(s.where.size(), 2u);
  EXPECT_EQ(s.where[0].index.name, "i");
  EXPECT_EQ(sexpr(*s.where[0].lo), "0");
  EXPECT_EQ(sexpr(*s.where[0].hi), "(/ N 2)");
  EXPECT_EQ(p.file.slice(s.where[0].span), "i in 0:N/2");
  EXPECT_EQ(p.file.slice(s.where[1].span), "k in 0:2");
  EXPECT_EQ(p.file.slice(s.span), "y(i) = x(2*i + k) where i in 0:N/2, k in 0:2");
  EXPECT_EQ(sexpr(*s.value), "(x@ (+ (* 2 i) k))");
}

TEST(Parser, Calls) {
  Parsed p = parse_text(
      "def f(float(N) x) -> (y) {\n"
      "  y = g(x)\n"          // a call: g is defined below
      "  (a, b) = h(x, y)\n"  // several results
      "  c = k(x)\n"          // k is no def: a read of a tensor k
      "  d() = g(x)\n"        // explicit (): a read too
      "  e = y\n"
      "  (u) = g(e)\n"  // after a bare name, '(' ... ')' '=' starts a statement
      "}\n"
      "def g(float(N) x) -> (y) { y(i) = x(i) }\n"
      "def h(float(N) x, float(N) y) -> (a, b) { a(i) = x(i); b(i) = y(i) }\n");
  const auto& body = p.program.functions[0].body;
  ASSERT_EQ(body.size(), 6u);
  EXPECT_EQ(body[0]->kind, StmtKind::Call);
  ASSERT_EQ(body[0]->results.size(), 1u);
  EXPECT_EQ(body[0]->results[0].name, "y");
  EXPECT_EQ(body[0]->callee.name, "g");
  EXPECT_EQ(p.file.slice(body[0]->callee.span), "g");
  ASSERT_EQ(body[0]->args.size(), 1u);
  EXPECT_EQ(p.file.slice(body[0]->args[0].span), "x");
  EXPECT_EQ(p.file.slice(body[0]->span), "y = g(x)");
  EXPECT_EQ(body[1]->kind, StmtKind::Call);
  ASSERT_EQ(body[1]->results.size(), 2u);
  EXPECT_EQ(body[1]->results[1].name, "b");
  EXPECT_EQ(body[1]->args.size(), 2u);
  EXPECT_EQ(p.file.slice(body[1]->span), "(a, b) = h(x, y)");
  EXPECT_EQ(body[2]->kind, StmtKind::Assign);
  EXPECT_EQ(sexpr(*body[2]->value), "(k@ x)");
  EXPECT_EQ(body[3]->kind, StmtKind::Assign);
  EXPECT_EQ(sexpr(*body[3]->value), "(g@ x)");
  EXPECT_EQ(sexpr(*body[4]->value), "y");
  EXPECT_EQ(body[5]->kind, StmtKind::Call);
  EXPECT_EQ(p.file.slice(body[5]->span), "(u) = g(e)");
}

TEST(Parser, ForLoops) {
  Parsed p = parse_body("for it in 0:3 {\n  y(i) += x(i)\n  for j in 1:N - 1 { z = 1 }\n}");
  const auto& s = *p.program.functions[0].body.at(0);
  EXPECT_EQ(s.kind, StmtKind::For);
  EXPECT_EQ(s.var.name, "it");
  EXPECT_EQ(sexpr(*s.lo), "0");
  EXPECT_EQ(sexpr(*s.hi), "3");
  ASSERT_EQ(s.body.size(), 2u);
  EXPECT_EQ(s.body[1]->kind, StmtKind::For);
  EXPECT_EQ(sexpr(*s.body[1]->hi), "(- N 1)");
  EXPECT_EQ(p.file.slice(s.body[1]->span), "for j in 1:N - 1 { z = 1 }");
  EXPECT_EQ(p.file.slice(s.span).substr(0, 15), "for it in 0:3 {");
  EXPECT_EQ(p.file.slice(s.span).back(), '}');
}

TEST(Parser, Precedence) {
  EXPECT_EQ(expr_of("a + b * c"), "(+ a (* b c))");
  EXPECT_EQ(expr_of("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(expr_of("a / b / c"), "(/ (/ a b) c)");
  EXPECT_EQ(expr_of("a - (b - c)"), "(- a (- b c))");
  EXPECT_EQ(expr_of("-a * b"), "(* (u- a) b)");
  EXPECT_EQ(expr_of("--a"), "(u- (u- a))");
  EXPECT_EQ(expr_of("!a && b || c && !d"), "(|| (&& (u! a) b) (&& c (u! d)))");
  EXPECT_EQ(expr_of("a + 1 < b * 2 && c"), "(&& (< (+ a 1) (* b 2)) c)");
  EXPECT_EQ(expr_of("(a < b) == c"), "(== (< a b) c)");
  EXPECT_THROW(expr_of("a < b == c"), CompileError);  // comparisons do not chain
  EXPECT_EQ(expr_of("a % b * c"), "(* (% a b) c)");
  // The conditional binds loosest and nests to the right.
  EXPECT_EQ(expr_of("a || b ? c + 1 : d ? e : f"), "(?: (|| a b) (+ c 1) (?: d e f))");
  EXPECT_EQ(expr_of("(a ? b : c) + 1"), "(+ (?: a b c) 1)");
  EXPECT_EQ(expr_of("a ? x?(i) : x ?(i) : 0"), "(?: a (x?@ i) (?: x i 0))");
  // TC's reduction hint is kept and printed back; `<=` alone is a comparison.
  Parsed p = parse_body("  y(i) +=! w(i, j) <=> rowsum(w)");
  ASSERT_TRUE(p.program.functions[0].body[0]->equivalent);
  EXPECT_EQ(sexpr(*p.program.functions[0].body[0]->equivalent), "(rowsum@ w)");
  EXPECT_NE(ast::print(p.program).find("y(i) +=! w(i, j) <=> rowsum(w)"), std::string::npos);
  EXPECT_EQ(expr_of("a <= b"), "(<= a b)");
}

TEST(Parser, Primaries) {
  EXPECT_EQ(expr_of("x(i, 2*j + 1)"), "(x@ i (+ (* 2 j) 1))");
  EXPECT_EQ(expr_of("x?(i - 1)"), "(x?@ (- i 1))");
  EXPECT_EQ(expr_of("z()"), "(z@)");
  EXPECT_EQ(expr_of("select(a > 0, pow(a, 2), fmax(a, 0))"),
            "(select (> a 0) (pow a 2) (fmax a 0))");
  EXPECT_EQ(expr_of("float64(int32(a)) + double(1)"), "(+ (float64 (int32 a)) (float64 1))");
  EXPECT_EQ(expr_of("1.5 + 2 + .25 + 1e3"), "(+ (+ (+ 1.5f 2) 0.25f) 1000f)");
  EXPECT_EQ(expr_of("exp(log(sqrt(tanh(sigmoid(abs(fmin(a, b)))))))"),
            "(exp (log (sqrt (tanh (sigmoid (abs (fmin a b)))))))");
}

TEST(Parser, ExpressionSpans) {
  Parsed p = parse_body("y = w?(i, j) * (a + float32(b)) - exp(c)");
  const Expr& e = *p.program.functions[0].body[0]->value;
  EXPECT_EQ(p.file.slice(e.span), "w?(i, j) * (a + float32(b)) - exp(c)");
  const Expr& mul = *e.args[0];
  EXPECT_EQ(p.file.slice(mul.span), "w?(i, j) * (a + float32(b))");
  const Expr& access = *mul.args[0];
  EXPECT_EQ(p.file.slice(access.span), "w?(i, j)");
  EXPECT_EQ(p.file.slice(access.name_span), "w");
  EXPECT_EQ(p.file.slice(access.args[1]->span), "j");
  EXPECT_EQ(p.file.slice(mul.args[1]->span), "(a + float32(b))");  // parentheses included
  EXPECT_EQ(p.file.slice(mul.args[1]->args[1]->span), "float32(b)");
  const Expr& call = *e.args[1];
  EXPECT_EQ(p.file.slice(call.span), "exp(c)");
  EXPECT_EQ(p.file.slice(call.name_span), "exp");
}

TEST(Parser, SeparatorsAndComments) {
  Parsed p = parse_text("# header\ndef f(float x) -> (y) { ;; y = x; ; z = y # trailing\n }");
  EXPECT_EQ(p.program.functions[0].body.size(), 2u);
  EXPECT_TRUE(parse_text("").program.functions.empty());
  EXPECT_TRUE(parse_text("  # only a comment").program.functions.empty());
}

TEST(Ast, Builtins) {
  for (const char* name : {"exp", "log", "sqrt", "tanh", "sigmoid", "abs"}) {
    EXPECT_TRUE(ast::is_builtin(name)) << name;
    EXPECT_EQ(ast::builtin_arity(name), 1) << name;
  }
  for (const char* name : {"pow", "fmax", "fmin", "max", "min", "atan2", "nextafter"})
    EXPECT_EQ(ast::builtin_arity(name), 2) << name;
  EXPECT_EQ(ast::builtin_arity("select"), 3);
  EXPECT_EQ(ast::builtin_arity("fma"), 3);
  EXPECT_EQ(ast::builtin_arity("rsqrt"), 1);
  EXPECT_FALSE(ast::is_builtin("fmod"));
  EXPECT_FALSE(ast::is_builtin("x"));
}

}  // namespace
}  // namespace tenet::lang
