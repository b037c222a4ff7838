/// \file
/// The abstract syntax tree of a .tn program, exactly as written: the parser
/// builds it, the checker (check.h) resolves it and lowers it to the IR.
/// Every node carries the Span of the text it came from.
///
/// Grammar (see docs/language.md for the reference):
///
///   program    := def*
///   def        := 'def' NAME '(' [param (',' param)*] ')' '->' '(' output (',' output)* ')'
///                 '{' stmt* '}'
///   param      := TYPE ['(' [dim (',' dim)*] ')'] NAME        -- no parens: a scalar
///   output     := [TYPE '(' [dim (',' dim)*] ')'] NAME         -- optional declared shape
///   dim        := NAME | INT
///   stmt       := NAME ['(' [NAME (',' NAME)*] ')'] assign_op expr ['<=>' expr] [where]
///               | (NAME | '(' NAME (',' NAME)* ')') '=' FUNC '(' [NAME (',' NAME)*] ')'
///               | NAME '=' 'reshape' '(' NAME (',' expr)* ')'   -- sizes: size expressions
///               | 'for' NAME 'in' expr ':' expr '{' stmt* '}'
///   assign_op  := '=' | '+=!' | 'max=!' | 'min=!' | '+='
///   where      := 'where' NAME 'in' expr ':' expr (',' NAME 'in' expr ':' expr)*
///   expr       := or ['?' expr ':' expr]   -- right-nested: a ? b : c ? d : e
///   or         := and ('||' and)* ; and := cmp ('&&' cmp)*
///   cmp        := add [('<'|'<='|'>'|'>='|'=='|'!=') add]
///   add        := mul (('+'|'-') mul)* ; mul := unary (('*'|'/'|'%') unary)*
///   unary      := ('-'|'!') unary | primary
///   primary    := NUMBER | NAME | NAME '(' args ')' | NAME '?' '(' args ')'
///               | BUILTIN '(' args ')' | TYPE '(' expr ')' | '(' expr ')'
///   (a guarded read NAME '?' has no space before '?'; with one, '?' is the ternary)
///
/// Statements need no separator (an optional ';' is accepted). '#' starts a comment.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/diagnostics.h"
#include "support/types.h"

namespace tenet::ast {

struct Ident {
  std::string name;
  Span span;
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind {
  Number,   // 1, 2.5, 1e-7 (is_integer tells whether it was written without '.'/exponent)
  Name,     // an index, a scalar tensor, a size parameter or a loop variable
  Access,   // T(e, ...) or, with guarded, T?(e, ...): reads 0 outside T's bounds
  Builtin,  // exp(e), pow(a, b), select(c, a, b), ...; name holds the builtin
  Unary,    // op is "-" or "!"
  Binary,   // op is one of + - * / % < <= > >= == != && ||
  Cast,     // float32(e), int64(e), ...; cast_to holds the type
  Ternary,  // c ? a : b (args: c, a, b); the same as select(c, a, b)
};

struct Expr {
  ExprKind kind;
  Span span;
  double number = 0;
  bool is_integer = false;
  std::string name;  // Name, Access, Builtin
  Span name_span;
  bool guarded = false;
  std::string op;  // Unary, Binary
  ElemType cast_to = ElemType::F32;
  std::vector<ExprPtr> args;  // Access indices, Builtin/Cast arguments, operands
};

/// The builtin functions and their arities (the table of ir/builtins.h;
/// docs/language.md lists them). `reshape` is a builtin too (no tensor or
/// function may take its name), but a statement of its own, with no arity:
/// builtin_arity gives -1.
bool is_builtin(const std::string& name);
int builtin_arity(const std::string& name);
inline constexpr const char* kReshape = "reshape";

/// `=`; the reductions `+=!`, `max=!`, `min=!`, `*=!`, which start from
/// their identity; the updates `+=`, `max=`, `min=`, `*=`, which start from
/// the existing tensor's values.
enum class AssignOp {
  Assign,
  SumReduce,
  MaxReduce,
  MinReduce,
  ProdReduce,
  Accumulate,
  MaxAccumulate,
  MinAccumulate,
  ProdAccumulate,
};
const char* assign_op_text(AssignOp op);  // "=", "+=!", "max=!", "min=!", "*=!", "+=", ...
/// True for `+=`, `max=`, `min=`, `*=` (onto an existing tensor).
bool accumulates(AssignOp op);

struct RangeClause {
  Ident index;
  ExprPtr lo, hi;  // size expressions; hi exclusive
  Span span;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

enum class StmtKind { Assign, Call, For };

struct Stmt {
  StmtKind kind;
  Span span;
  // Assign: target(indices) op value where ...
  Ident target;
  std::vector<Ident> indices;
  AssignOp op = AssignOp::Assign;
  Span op_span;
  ExprPtr value;
  std::vector<RangeClause> where;
  std::vector<ExprPtr> exists;  // `where exists X(i, ...)`: reads for range inference only
  ExprPtr equivalent;           // TC's `<=> f(...)` reduction hint, if written: ignored
  Span equivalent_span;
  // Call: (results) = callee(args); a reshape is the call `result =
  // reshape(arg, sizes...)` of the builtin (is_reshape).
  std::vector<Ident> results;
  Ident callee;
  std::vector<Ident> args;
  std::vector<ExprPtr> sizes;  // reshape: the new shape, one size expression per dimension
  bool is_reshape() const { return kind == StmtKind::Call && callee.name == kReshape; }
  // For: for var in lo:hi { body }
  Ident var;
  ExprPtr lo, hi;
  std::vector<StmtPtr> body;
};

struct Dim {
  std::string name;  // empty for a constant
  int64_t value = 0;
  Span span;
};

struct Param {
  ElemType type = ElemType::F32;
  Span type_span;
  bool scalar = false;  // declared without parentheses
  std::vector<Dim> dims;
  Ident name;
};

struct Output {
  Ident name;
  bool declared = false;  // has TYPE(dims)
  ElemType type = ElemType::F32;
  std::vector<Dim> dims;
};

struct Function {
  Ident name;
  Span span;  // 'def' ... '}'
  std::vector<Param> params;
  std::vector<Output> outputs;
  std::vector<StmtPtr> body;
};

/// The AST of one source file: its defs, in order.
struct File {
  std::vector<Function> functions;
};

/// Prints the program back as source, normalised (one statement per line,
/// two-space indentation). `tenet print --stage parse` uses it, and
/// parse(print(p)) == p is tested.
std::string print(const File& p);

}  // namespace tenet::ast
