// The builtins (ir/builtins.h) and the source printer. The printer writes the tree back
// with the fewest parentheses that still parse to the same tree, and numbers
// in their shortest round-tripping form, so parse(print(p)) prints as p.
#include "lang/ast.h"

#include <charconv>
#include <set>
#include <sstream>
#include <string_view>

#include "ir/builtins.h"
#include "support/error.h"

namespace tenet::ast {

bool is_builtin(const std::string& name) {
  return ir::find_builtin(name) != nullptr;
}

int builtin_arity(const std::string& name) {
  const ir::Builtin* b = ir::find_builtin(name);
  return b ? b->arity : -1;
}

const char* assign_op_text(AssignOp op) {
  switch (op) {
    case AssignOp::Assign:
      return "=";
    case AssignOp::SumReduce:
      return "+=!";
    case AssignOp::MaxReduce:
      return "max=!";
    case AssignOp::MinReduce:
      return "min=!";
    case AssignOp::ProdReduce:
      return "*=!";
    case AssignOp::Accumulate:
      return "+=";
    case AssignOp::MaxAccumulate:
      return "max=";
    case AssignOp::MinAccumulate:
      return "min=";
    case AssignOp::ProdAccumulate:
      return "*=";
  }
  return "?";
}

bool accumulates(AssignOp op) {
  return op == AssignOp::Accumulate || op == AssignOp::MaxAccumulate ||
         op == AssignOp::MinAccumulate || op == AssignOp::ProdAccumulate;
}

namespace {

// Binding strength, as in the grammar: ?: < || < && < comparisons < + - < * / < unary < primary.
constexpr int kPrimary = 7, kUnary = 6, kTernary = 0;

int binary_precedence(const std::string& op) {
  if (op == "||") return 1;
  if (op == "&&") return 2;
  if (op == "+" || op == "-") return 4;
  if (op == "*" || op == "/" || op == "%") return 5;
  return 3;  // comparisons
}

int precedence(const Expr& e) {
  if (e.kind == ExprKind::Ternary) return kTernary;
  if (e.kind == ExprKind::Binary) return binary_precedence(e.op);
  if (e.kind == ExprKind::Unary) return kUnary;
  return kPrimary;
}

std::string number_text(double value, bool is_integer) {
  char buf[400];  // the longest fixed form of a double has 309 digits
  auto format = is_integer ? std::chars_format::fixed : std::chars_format::general;
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, format);
  TENET_ASSERT(ec == std::errc(), "cannot format number " << value);
  std::string text(buf, end);
  // Keep a non-integer literal non-integer when it parses back: 2.0, not 2.
  if (!is_integer && text.find_first_of(".eEin") == std::string::npos) text += ".0";
  return text;
}

class Printer {
 public:
  explicit Printer(const File& p) {
    for (const Function& f : p.functions) function_names_.insert(f.name.name);
  }
  std::string str() const { return out_.str(); }

  void function(const Function& f, bool blank_line_before) {
    if (blank_line_before) out_ << "\n";
    out_ << "def " << f.name.name << "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      const Param& p = f.params[i];
      out_ << (i ? ", " : "") << type_name(p.type);
      if (!p.scalar) dims(p.dims);
      out_ << " " << p.name.name;
    }
    out_ << ") -> (";
    for (size_t i = 0; i < f.outputs.size(); ++i) {
      const Output& o = f.outputs[i];
      out_ << (i ? ", " : "");
      if (o.declared) {
        out_ << type_name(o.type);
        dims(o.dims);
        out_ << " ";
      }
      out_ << o.name.name;
    }
    out_ << ") {\n";
    block(f.body, 1);
    out_ << "}\n";
  }

 private:
  void dims(const std::vector<Dim>& ds) {
    out_ << "(";
    for (size_t i = 0; i < ds.size(); ++i) {
      out_ << (i ? ", " : "");
      if (ds[i].name.empty())
        out_ << ds[i].value;
      else
        out_ << ds[i].name;
    }
    out_ << ")";
  }

  void names(const std::vector<Ident>& ids) {
    for (size_t i = 0; i < ids.size(); ++i) out_ << (i ? ", " : "") << ids[i].name;
  }

  void block(const std::vector<StmtPtr>& body, int depth) {
    for (const StmtPtr& s : body) stmt(*s, depth);
  }

  void stmt(const Stmt& s, int depth) {
    std::string indent(2 * size_t(depth), ' ');
    out_ << indent;
    switch (s.kind) {
      case StmtKind::Assign:
        out_ << s.target.name;
        // `y() = f(x)` must not print as `y = f(x)`, the call of a def f.
        if (!s.indices.empty() || (s.value->kind == ExprKind::Access && !s.value->guarded &&
                                   function_names_.count(s.value->name))) {
          out_ << "(";
          names(s.indices);
          out_ << ")";
        }
        out_ << " " << assign_op_text(s.op) << " ";
        expr(*s.value, 0);
        if (s.equivalent) {
          out_ << " <=> ";
          expr(*s.equivalent, 0);
        }
        for (size_t i = 0; i < s.where.size(); ++i) {
          const RangeClause& r = s.where[i];
          out_ << (i ? ", " : " where ") << r.index.name << " in ";
          expr(*r.lo, 0);
          out_ << ":";
          expr(*r.hi, 0);
        }
        for (size_t i = 0; i < s.exists.size(); ++i) {
          out_ << (i || !s.where.empty() ? ", exists " : " where exists ");
          expr(*s.exists[i], 0);
        }
        out_ << "\n";
        return;
      case StmtKind::Call:
        if (s.results.size() == 1) {
          out_ << s.results[0].name;
        } else {
          out_ << "(";
          names(s.results);
          out_ << ")";
        }
        out_ << " = " << s.callee.name << "(";
        names(s.args);
        for (const ExprPtr& size : s.sizes) {
          out_ << ", ";
          expr(*size, 0);
        }
        out_ << ")\n";
        return;
      case StmtKind::For:
        out_ << "for " << s.var.name << " in ";
        expr(*s.lo, 0);
        out_ << ":";
        expr(*s.hi, 0);
        out_ << " {\n";
        block(s.body, depth + 1);
        out_ << indent << "}\n";
        return;
    }
  }

  void args(const Expr& e) {
    out_ << "(";
    for (size_t i = 0; i < e.args.size(); ++i) {
      out_ << (i ? ", " : "");
      expr(*e.args[i], 0);
    }
    out_ << ")";
  }

  // Prints `e`, parenthesised if it binds looser than `min_precedence`.
  void expr(const Expr& e, int min_precedence) {
    bool parens = precedence(e) < min_precedence;
    if (parens) out_ << "(";
    switch (e.kind) {
      case ExprKind::Number:
        out_ << number_text(e.number, e.is_integer);
        break;
      case ExprKind::Name:
        out_ << e.name;
        break;
      case ExprKind::Access:
        out_ << e.name << (e.guarded ? "?" : "");
        args(e);
        break;
      case ExprKind::Builtin:
        out_ << e.name;
        args(e);
        break;
      case ExprKind::Cast:
        out_ << type_name(e.cast_to);
        args(e);
        break;
      case ExprKind::Ternary:
        expr(*e.args[0], kTernary + 1);
        out_ << " ? ";
        expr(*e.args[1], kTernary);
        out_ << " : ";
        expr(*e.args[2], kTernary);
        break;
      case ExprKind::Unary:
        out_ << e.op;
        expr(*e.args[0], kUnary);
        break;
      case ExprKind::Binary: {
        // Left-associative, and comparisons do not chain: the right operand
        // (and for comparisons the left one too) must bind strictly tighter.
        int p = binary_precedence(e.op);
        expr(*e.args[0], p == 3 ? p + 1 : p);
        out_ << " " << e.op << " ";
        expr(*e.args[1], p + 1);
        break;
      }
    }
    if (parens) out_ << ")";
  }

  std::set<std::string> function_names_;
  std::ostringstream out_;
};

}  // namespace

std::string print(const File& p) {
  Printer printer(p);
  for (size_t i = 0; i < p.functions.size(); ++i) printer.function(p.functions[i], i > 0);
  return printer.str();
}

}  // namespace tenet::ast
