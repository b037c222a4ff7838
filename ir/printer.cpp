#include "ir/printer.h"

#include <charconv>
#include <cmath>
#include <sstream>

#include "ir/conv_plan.h"
#include "ir/gemm_plan.h"

namespace tenet::ir {

namespace {

bool is_ident_char(char c, bool first) {
  bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  return first ? alpha : alpha || (c >= '0' && c <= '9') || c == '.';
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !is_ident_char(s[0], true)) return false;
  for (char c : s)
    if (!is_ident_char(c, false)) return false;
  return true;
}

// A double-quoted string with C-style escapes; the IR lexer reads it back.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          static const char* hex = "0123456789abcdef";
          out += "\\x";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out += char(c);
        }
    }
  }
  return out + "\"";
}

// Value names are "%" followed by letters, digits, '_' and '.', or a quoted string.
std::string value_ref(const std::string& name) {
  bool plain = !name.empty();
  for (char c : name) plain = plain && is_ident_char(c, false);
  return "%" + (plain ? name : quoted(name));
}

std::string value_ref(const ValuePtr& v) {
  return v ? value_ref(v->name) : "%<null>";
}

std::string join_sizes(const std::vector<SizeExpr>& sizes) {
  std::string out;
  for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + sizes[i].str();
  return out;
}

std::string layout_suffix(const Value& v) {
  if (v.layout.empty()) return "";
  std::string out = " layout(";
  for (size_t i = 0; i < v.layout.size(); ++i) out += (i ? ", " : "") + std::to_string(v.layout[i]);
  return out + ")";
}

// "float32[B, N]" plus " layout(1, 0)" when the value has a layout.
std::string type_of(const Value& v) {
  return std::string(type_name(v.type)) + "[" + join_sizes(v.shape) + "]" + layout_suffix(v);
}

// Shortest text that reads back as exactly the same double (inf, -inf, nan too).
std::string exact_double(double x) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, res.ptr);
}

std::string constant(double value, ElemType type) {
  std::string literal;
  if (type == ElemType::Bool) {
    literal = value != 0 ? "true" : "false";
  } else if (!is_float(type) && std::nearbyint(value) == value && std::abs(value) < 9.3e18) {
    literal = std::to_string(int64_t(value));
  } else {
    literal = exact_double(value);
  }
  return literal + ":" + std::string(type_name(type));
}

void print_expr(std::ostringstream& os, const Expr& e) {
  if (!e) {
    os << "<null>";
    return;
  }
  switch (e->kind) {
    case ExprKind::Const:
      os << constant(e->value, e->type);
      return;
    case ExprKind::Index:
      os << e->index;
      return;
    case ExprKind::Size:
      os << "size(" << e->size.str() << ")";
      return;
    case ExprKind::Read:
      os << value_ref(e->tensor) << (e->guarded ? "?[" : "[");
      for (size_t i = 0; i < e->indices.size(); ++i) {
        os << (i ? ", " : "");
        if (!e->is_computed(i)) {
          os << e->indices[i].str();
          continue;
        }
        os << "{";  // a computed index: an expression in braces
        print_expr(os, e->computed[i]);
        os << "}";
      }
      os << "]";
      return;
    case ExprKind::Unary:
      os << op_name(e->unop) << "(";
      break;
    case ExprKind::Binary:
      os << op_name(e->binop) << "(";
      break;
    case ExprKind::Select:
      os << "select(";
      break;
    case ExprKind::Cast:
      os << "cast<" << type_name(e->type) << ">(";
      break;
  }
  for (size_t i = 0; i < e->args.size(); ++i) {
    if (i) os << ", ";
    print_expr(os, e->args[i]);
  }
  os << ")";
}

class FunctionPrinter {
 public:
  explicit FunctionPrinter(std::ostringstream& os) : os_(os) {}

  void function(const Function& fn) {
    os_ << "func " << (is_identifier(fn.name) ? fn.name : quoted(fn.name));
    if (!fn.size_params.empty()) {
      os_ << "[";
      for (size_t i = 0; i < fn.size_params.size(); ++i)
        os_ << (i ? ", " : "") << fn.size_params[i];
      os_ << "]";
    }
    os_ << "(";
    for (size_t i = 0; i < fn.inputs.size(); ++i)
      os_ << (i ? ", " : "") << value_ref(fn.inputs[i]) << ": " << type_of(*fn.inputs[i]);
    os_ << ") {\n";
    block(fn.body, 1);
    os_ << "  return";
    for (size_t i = 0; i < fn.outputs.size(); ++i) {
      os_ << (i ? ", " : " ") << value_ref(fn.outputs[i]);
      // The user-facing name, when it is not the value's own ("%v.1 as v").
      if (i < fn.output_names.size() && fn.outputs[i] && fn.output_names[i] != fn.outputs[i]->name)
        os_ << " as "
            << (is_identifier(fn.output_names[i]) ? fn.output_names[i]
                                                  : quoted(fn.output_names[i]));
      if (int k = fn.gradient_of(i); k >= 0 && size_t(k) < fn.inputs.size())
        os_ << " gradient of " << value_ref(fn.inputs[size_t(k)]);
    }
    os_ << "\n}\n";
  }

 private:
  void indent(int depth) { os_ << std::string(2 * depth, ' '); }

  // The statement's source as '#' lines, then its attributes, on lines of their own.
  void preamble(const Stmt& s, int depth) {
    if (!s.source.empty()) {
      std::istringstream lines(s.source);
      std::string line;
      while (std::getline(lines, line)) {
        indent(depth);
        os_ << (line.empty() ? "#" : "# " + line) << "\n";
      }
      // getline drops a final empty line; print it so the text reads back the same.
      if (s.source.back() == '\n') {
        indent(depth);
        os_ << "#\n";
      }
    }
    const std::vector<std::string> notes = annotations(s);
    if (!notes.empty()) {
      indent(depth);
      os_ << "attrs(";
      for (size_t i = 0; i < notes.size(); ++i) os_ << (i ? ", " : "") << notes[i];
      os_ << ")\n";
    }
  }

  // The annotations as `key = value` items (docs/ir.md, "Annotations").
  static std::vector<std::string> annotations(const Stmt& s) {
    const Annotations& a = s.annotations;
    std::vector<std::string> out;
    if (a.reshape) out.push_back("reshape = true");
    if (a.ad != AdOrigin::None)
      out.push_back(std::string("ad = ") +
                    (a.ad == AdOrigin::Backward ? "backward " : "unrolled ") + quoted(a.ad_detail));
    if (a.gemm) out.push_back("gemm = " + gemm(*a.gemm, s.compute));
    if (a.conv) out.push_back(std::string("conv = ") + role_name(a.conv->role));
    auto names = [](const std::vector<std::string>& list) {
      std::string text;
      for (const std::string& n : list) text += (text.empty() ? "" : ", ") + n;
      return "[" + text + "]";
    };
    std::vector<std::string> refs;
    for (const std::string& v : a.inlined) refs.push_back(value_ref(v));
    if (!refs.empty()) out.push_back("inlined = " + names(refs));
    refs.clear();
    for (const Recomputed& r : a.recomputed)
      refs.push_back(value_ref(r.value) + " (" + std::to_string(r.uses) +
                     (r.uses == 1 ? " use)" : " uses)"));
    if (!refs.empty()) out.push_back("recomputed = " + names(refs));
    if (!a.saved.empty()) out.push_back("saved = " + quoted(a.saved));
    if (a.inner_loops > 0 && s.kind == StmtKind::Compute) {
      const Compute& c = s.compute;
      std::vector<std::string> order;
      for (size_t p = 0; p + a.inner_loops < c.out.size(); ++p) order.push_back(c.out[p].index);
      for (const Dim& d : c.reduce) order.push_back(d.index);
      for (size_t p = c.out.size() - std::min(a.inner_loops, c.out.size()); p < c.out.size(); ++p)
        order.push_back(c.out[p].index);
      out.push_back("order = " + names(order));
    }
    if (a.nest > 0 && s.kind == StmtKind::Compute) {
      std::vector<std::string> shared;
      for (size_t p = 0; p < a.nest && p < s.compute.out.size(); ++p)
        shared.push_back(s.compute.out[p].index);
      out.push_back("nest = " + names(shared));
    }
    if (a.jam > 0 && s.kind == StmtKind::Compute) out.push_back("jam = " + std::to_string(a.jam));
    if (a.lanes > 0 && s.kind == StmtKind::Compute)
      out.push_back("lanes = " + std::to_string(a.lanes));
    if (a.scan > 0 && s.kind == StmtKind::Compute && a.scan <= s.compute.out.size())
      out.push_back("scan = " + s.compute.out[a.scan - 1].index);
    return out;
  }

  // always|if WORK >= MIN [split(PRODUCT, gather [RANGES] BODY)] [for [LOOPS]] C = A * B
  static std::string gemm(const GemmPlan& p, const Compute& statement) {
    std::string out = p.per_call_min_work == 0
                          ? "always"
                          : "if " + p.work.str() + " >= " + std::to_string(p.per_call_min_work);
    const Compute& c = p.product(statement);
    if (p.split) {
      std::ostringstream product;
      FunctionPrinter(product).compute(c);
      std::string text = product.str();
      text.pop_back();  // the newline
      out += " split(" + text + ", gather " + ranges(p.split->gather.reduce) + " " +
             print(p.split->gather.body) + ")";
    }
    auto group = [](const std::vector<Dim>& dims) {
      std::string text;
      for (const Dim& d : dims) text += (text.empty() ? "" : ", ") + d.index;
      return text;
    };
    auto matrix = [&](const GemmMatrix& m, const ValuePtr& tensor, const std::vector<Dim>& rows,
                      const std::vector<Dim>& cols) {
      const std::string ref = value_ref(tensor);
      return (m.packed       ? "pack(" + ref + ")"
              : m.transposed ? "transposed(" + ref + ")"
                             : ref) +
             "[" + group(rows) + " : " + group(cols) + "]";
    };
    if (!p.loops.empty()) out += " for [" + group(p.loops) + "]";
    return out + " " + matrix(p.c, c.result, p.m, p.n) + " = " +
           matrix(p.a, gemm_read(c, p.a).tensor, p.m, p.k) + " * " +
           matrix(p.b, gemm_read(c, p.b).tensor, p.k, p.n);
  }

  static std::string ranges(const std::vector<Dim>& dims) {
    std::string out;
    for (const Dim& d : dims)
      out += (out.empty() ? "" : ", ") + d.index + " in " + d.lo.str() + ":" + d.hi.str();
    return "[" + out + "]";
  }

  void block(const std::vector<Stmt>& body, int depth) {
    for (const Stmt& s : body) {
      preamble(s, depth);
      indent(depth);
      if (s.kind == StmtKind::Compute)
        compute(s.compute);
      else if (s.loop)
        loop(*s.loop, depth);
      else
        os_ << "<null loop>\n";
    }
  }

  void compute(const Compute& c) {
    os_ << value_ref(c.result) << "[";
    for (size_t i = 0; i < c.out.size(); ++i) os_ << (i ? ", " : "") << c.out[i].index;
    os_ << "]: " << (c.result ? type_of(*c.result) : "<null>") << " = ";
    if (c.op != ReduceOp::None) {
      os_ << op_name(c.op) << " " << ranges(c.reduce) << " ";
      if (c.init) os_ << "init(" << value_ref(c.init) << ") ";
    }
    print_expr(os_, c.body);
    os_ << "\n";
  }

  void loop(const Loop& l, int depth) {
    os_ << "loop " << l.var << " in 0:" << l.trip;
    bool any_param = false;
    for (const auto& c : l.carried) {
      if (!c.param) continue;
      os_ << (any_param ? ", " : " carry(") << value_ref(c.param) << layout_suffix(*c.param)
          << " = " << value_ref(c.init);
      any_param = true;
    }
    os_ << (any_param ? ") {\n" : " {\n");
    block(l.body, depth + 1);
    indent(depth);
    os_ << "}";
    for (size_t i = 0; i < l.carried.size(); ++i) {
      const Loop::Carried& c = l.carried[i];
      os_ << (i ? ", " : " -> (") << value_ref(c.result)
          << (c.result ? layout_suffix(*c.result) : "") << " = " << (c.param ? "next " : "")
          << value_ref(c.next);
    }
    os_ << (l.carried.empty() ? "\n" : ")\n");
  }

  std::ostringstream& os_;
};

}  // namespace

std::string print(const Function& fn) {
  std::ostringstream os;
  FunctionPrinter(os).function(fn);
  return os.str();
}

std::string print(const Module& m) {
  std::string out;
  for (size_t i = 0; i < m.functions.size(); ++i) out += (i ? "\n" : "") + print(m.functions[i]);
  return out;
}

std::string read_text(const ExprNode& read) {
  std::string out = read.tensor->name + (read.guarded ? "?(" : "(");
  for (size_t i = 0; i < read.indices.size(); ++i)
    out += (i ? ", " : "") +
           (read.is_computed(i) ? index_text(read.computed[i]) : read.indices[i].str());
  return out + ")";
}

namespace {

// Precedences for index_text: sums, products, then everything else.
int text_precedence(const Expr& e) {
  if (e->kind != ExprKind::Binary) return 3;
  switch (e->binop) {
    case BinOp::Add:
    case BinOp::Sub:
      return 1;
    case BinOp::Mul:
    case BinOp::Div:
    case BinOp::Rem:
      return 2;
    default:
      return 3;
  }
}

std::string operand_text(const Expr& e, int min_precedence) {
  std::string t = index_text(e);
  return text_precedence(e) < min_precedence ? "(" + t + ")" : t;
}

}  // namespace

std::string index_text(const Expr& e) {
  switch (e->kind) {
    case ExprKind::Const: {
      if (!is_float(e->type)) return std::to_string(int64_t(e->value));
      std::ostringstream os;
      os << e->value;  // 6 significant digits: for messages
      return os.str();
    }
    case ExprKind::Index:
      return e->index;
    case ExprKind::Size:
      return e->size.str();
    case ExprKind::Read:
      return read_text(*e);
    case ExprKind::Cast:  // the language's int32(...), int64(...) conversions
      if (!is_float(e->type) && !is_float(e->args[0]->type)) return index_text(e->args[0]);
      return std::string(type_name(e->type)) + "(" + index_text(e->args[0]) + ")";
    case ExprKind::Binary: {
      const char* op = e->binop == BinOp::Add   ? " + "
                       : e->binop == BinOp::Sub ? " - "
                       : e->binop == BinOp::Mul ? "*"
                       : e->binop == BinOp::Div ? " / "
                       : e->binop == BinOp::Rem ? " % "
                                                : nullptr;
      if (!op) break;
      const int p = text_precedence(e);
      return operand_text(e->args[0], p) + op + operand_text(e->args[1], p + 1);
    }
    case ExprKind::Unary:
      if (e->unop == UnOp::Neg) return "-" + operand_text(e->args[0], 3);
      break;
    default:
      break;
  }
  return print(e);
}

std::string print(const Expr& e) {
  std::ostringstream os;
  print_expr(os, e);
  return os.str();
}

}  // namespace tenet::ir
