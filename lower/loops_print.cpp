// The loop tree as text (`tenet print --stage loops`): one line per node,
// indented by nesting; variables as hint#id, so that the tree's own naming
// shows (a backend gives them names of its language).
#include <sstream>

#include "ir/printer.h"
#include "lower/loops.h"

namespace tenet::lower {

namespace {

class TreePrinter {
 public:
  explicit TreePrinter(int vars) : names_(size_t(vars)) {}

  void block(const Block& b, int depth) {
    for (const Node& n : b) node(n, depth);
  }
  std::string str() const { return out_.str(); }

 private:
  std::string var(const Var& v) {
    std::string& name = names_.at(size_t(v.id));
    if (name.empty()) name = v.hint + "#" + std::to_string(v.id);
    return name;
  }
  std::string index(const IndexExpr& e) {
    if (e->kind == IndexKind::Variable) return var(e->var);
    if (!e->args.empty())
      for (const IndexExpr& a : e->args) index(a);  // names its variables
    return print(e, names_);
  }
  std::string place(const Place& p) {
    if (p.tensor) {
      std::string text = p.tensor->name + "(";
      for (size_t d = 0; d < p.indices.size(); ++d) text += (d ? ", " : "") + p.indices[d].str();
      return text + ")";
    }
    return var(p.local) + (p.at ? "[" + index(p.at) + "]" : "");
  }
  std::string operand(const Operand& o) {
    switch (o.kind) {
      case Operand::Expr:
        return ir::print(o.expr);
      case Operand::Load:
        return place(o.place);
      case Operand::Identity:
        return "identity";
      case Operand::Zero:
        return "0.0";
      case Operand::Fold:
        return "fold(" + var(o.place.local) + ", " + std::to_string(o.lanes) + ")";
    }
    return "?";
  }
  std::string work(const ParallelWork& w) {
    if (w.terms.empty()) return "parallel";
    std::string sum;
    for (const ParallelWork::Term& t : w.terms) {
      std::string product;
      for (const ParallelWork::Factor& f : t.factors)
        product += (product.empty() ? "" : " * ") + index(f.extent);
      sum += (sum.empty() ? "" : " + ") + product +
             (t.constant == 1 ? "" : " * " + std::to_string(t.constant));
    }
    if (w.constant) sum += " + " + std::to_string(w.constant);
    std::string bound = std::to_string(w.min_work);
    for (const ParallelWork::Factor& f : w.scale) bound += " * " + index(f.extent);
    return "parallel if " + sum + (w.below ? " < " : " >= ") + bound;
  }
  void line(int depth, const std::string& text) {
    out_ << std::string(size_t(2 * depth), ' ') << text << "\n";
  }
  void open(int depth, const std::string& head, const Block& body) {
    line(depth, head + " {");
    block(body, depth + 1);
    line(depth, "}");
  }

  /// "statement y [i=i#0, k=k#1] checked": the statement's indices as bound
  /// (a shared loop's, bound again in dimension order, once).
  std::string statement_head(const Node& n) {
    std::string head = (n.resume ? "continue " : "statement ") + n.stmt->compute.result->name;
    if (n.resume) return head;
    std::string binds;
    for (size_t k = 0; k < n.bindings.size(); ++k) {
      const Binding& b = n.bindings[k];
      bool rebound = false;
      for (size_t later = k + 1; later < n.bindings.size(); ++later)
        rebound = rebound || n.bindings[later].index == b.index;
      if (!rebound) binds += (binds.empty() ? "" : ", ") + b.index + "=" + var(b.var);
    }
    return head + " [" + binds + "]" + (n.check_indices ? " checked" : "");
  }

  std::string let_value(const Node& n) {
    if (n.index) {
      std::string value = index(n.index);
      for (const auto& [more, v] : n.more) value += ", " + var(more) + " = " + index(v);
      return value;
    }
    if (n.computed_dim >= 0)
      return "checked index " + std::to_string(n.computed_dim) + " of " + ir::print(n.expr);
    if (n.expr) return "hoisted " + ir::print(n.expr);
    return std::string(n.wide ? "double " : "") + operand(n.source);
  }

  std::string for_head(const Node& n) {
    std::string head = "for " + var(n.var) + " in " + index(n.first) + ":" + index(n.end);
    if (n.step) head += " step " + index(n.step);
    if (n.reverse) head += " downwards";
    if (n.loop_kind == LoopKind::Parallel && n.parallel) head += " " + work(*n.parallel);
    if (n.loop_kind == LoopKind::Vectorized) head += " vectorized";
    if (n.loop_kind == LoopKind::Simd) head += " simd";
    if (n.loop_kind == LoopKind::Unrolled) head += " unrolled " + std::to_string(n.unroll);
    if (n.loop_kind == LoopKind::GpuThread) head += " thread / " + index(n.grid_stride);
    if (n.loop_kind == LoopKind::GpuLane) head += " lanes / " + index(n.grid_stride);
    return head;
  }

  void node(const Node& n, int depth) {
    switch (n.kind) {
      case NodeKind::For:
        return open(depth, for_head(n), n.body);
      case NodeKind::Scope:
        return open(depth, "scope", n.body);
      case NodeKind::If: {
        std::string tests;
        if (n.condition) tests = ir::print(n.condition);
        for (const Node::Test& t : n.tests)
          tests += (tests.empty() ? "" : " && ") + var(t.var) + (t.lower ? " >= " : " < ") +
                   std::to_string(t.bound);
        open(depth, "if " + tests, n.body);
        if (!n.orelse.empty()) open(depth, "else", n.orelse);
        return;
      }
      case NodeKind::Statement:
        return open(depth, statement_head(n), n.body);
      case NodeKind::NameScope:
        for (const Binding& b : n.bindings) var(b.var);
        return open(depth, "names", n.body);
      case NodeKind::Let:
        return line(depth, "let " + var(n.var) + " = " + let_value(n));
      case NodeKind::Alias:
        return line(depth, "alias " + ir::print(n.expr) + " = " + place(n.target));
      case NodeKind::Array:
        if (n.row_of)
          return line(depth, "row " + n.row_of->name + "[" + std::to_string(n.count) + "]");
        return line(depth, "array " + var(n.var) + "[" + std::to_string(n.count) + "]" +
                               (n.wide ? " double" : ""));
      case NodeKind::Assign: {
        std::string value = operand(n.source);
        if (n.round_double) value = "round(" + value + ")";
        return line(depth,
                    place(n.target) + " " +
                        (n.op == ir::ReduceOp::None ? "=" : ir::op_name(n.op) + std::string("=")) +
                        " " + value);
      }
      case NodeKind::Comment:
      case NodeKind::Note:
        return line(depth, "// " + n.text);
      case NodeKind::Blank:
        return;
      case NodeKind::Call: {
        static const char* kinds[] = {"gemm", "gemm call", "conv", "view"};
        const std::string head =
            std::string("call ") + kinds[int(n.call)] + " " + n.stmt->compute.result->name;
        if (n.nested.empty() && n.body.empty()) return line(depth, head);
        line(depth, head + " {");
        for (const auto& [stmt, body] : n.nested) {
          (void)stmt;
          block(body, depth + 1);
        }
        block(n.body, depth + 1);
        return line(depth, "}");
      }
      case NodeKind::SkipUnlessInBounds:
        return line(depth, "skip unless 0 <= " + var(n.var) + " < " + index(n.index));
      case NodeKind::CheckNonEmpty:
        return line(depth, "check nonempty " + n.stmt->compute.result->name);
      case NodeKind::RaiseIndexFault:
        return line(depth, "raise index fault");
      case NodeKind::Kernel:
        return open(depth,
                    "kernel " + var(n.var) + " in 0:" + index(n.end) + " blocks of " +
                        std::to_string(n.count) +
                        (n.grouped ? " grouped over " + index(n.reduce_length) : ""),
                    n.body);
      case NodeKind::GroupReduce:
        return line(depth, "group " + var(n.var) + " " + ir::op_name(n.op));
      case NodeKind::GroupLeader:
        return open(depth, "leader", n.body);
      case NodeKind::CarriedLoop:
        return open(depth, "loop " + var(n.var) + " in 0:" + std::to_string(n.stmt->loop->trip),
                    n.body);
    }
  }

  std::vector<std::string> names_;
  std::ostringstream out_;
};

}  // namespace

std::string print(const LoopTree& tree, const ir::Function& fn) {
  TreePrinter p(tree.vars);
  p.block(tree.body, 1);
  return "loops " + fn.name + " {\n" + p.str() + "}\n";
}

}  // namespace tenet::lower
