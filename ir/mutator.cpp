// Walking and rewriting IR (mutator.h).
#include "ir/mutator.h"

#include "ir/affine.h"
#include "ir/builder.h"
#include "support/error.h"

namespace tenet::ir {

void ExprVisitor::visit(const Expr& e) {
  switch (e->kind) {
    case ExprKind::Const:
      return visit_const(e);
    case ExprKind::Index:
      return visit_index(e);
    case ExprKind::Size:
      return visit_size(e);
    case ExprKind::Read:
      return visit_read(e);
    case ExprKind::Unary:
      return visit_unary(e);
    case ExprKind::Binary:
      return visit_binary(e);
    case ExprKind::Select:
      return visit_select(e);
    case ExprKind::Cast:
      return visit_cast(e);
  }
  TENET_UNREACHABLE("unknown expression kind");
}

void ExprVisitor::visit_read(const Expr& e) {
  for (const Expr& c : e->computed)
    if (c) visit(c);
}

void ExprVisitor::visit_args(const Expr& e) {
  for (const Expr& a : e->args) visit(a);
}

Expr ExprMutator::mutate(const Expr& e) {
  switch (e->kind) {
    case ExprKind::Const:
      return mutate_const(e);
    case ExprKind::Index:
      return mutate_index(e);
    case ExprKind::Size:
      return mutate_size(e);
    case ExprKind::Read:
      return mutate_read(e);
    case ExprKind::Unary:
      return mutate_unary(e);
    case ExprKind::Binary:
      return mutate_binary(e);
    case ExprKind::Select:
      return mutate_select(e);
    case ExprKind::Cast:
      return mutate_cast(e);
  }
  TENET_UNREACHABLE("unknown expression kind");
}

Expr ExprMutator::mutate_read(const Expr& e) {
  ValuePtr tensor = mutate_tensor(e->tensor);
  bool changed = tensor != e->tensor;
  std::vector<Affine> indices = mutate_indices(e->indices, changed);
  if (!e->has_computed_index())
    return changed ? make_read(tensor, std::move(indices), e->guarded) : e;
  std::vector<Expr> computed;
  for (const Expr& c : e->computed) {
    computed.push_back(c ? mutate(c) : nullptr);
    changed = changed || computed.back() != c;
  }
  return changed ? make_read(tensor, std::move(indices), std::move(computed), e->guarded) : e;
}

std::vector<Affine> ExprMutator::mutate_indices(const std::vector<Affine>& indices, bool& changed) {
  std::vector<Affine> out;
  for (const Affine& a : indices) {
    out.push_back(mutate_affine(a));
    changed = changed || !identical(out.back(), a);
  }
  return out;
}

Expr ExprMutator::mutate_args(const Expr& e) {
  std::vector<Expr> args;
  bool changed = false;
  for (const Expr& a : e->args) {
    args.push_back(mutate(a));
    changed = changed || args.back() != a;
  }
  return changed ? with_args(e, std::move(args)) : e;
}

void StmtMutator::mutate_block(std::vector<Stmt>& body) {
  std::vector<Stmt> out;
  for (Stmt& s : body) {
    if (s.kind == StmtKind::Loop)
      mutate_loop(s, out);
    else
      mutate_compute(s, out);
  }
  body = std::move(out);
}

void StmtMutator::mutate_loop(Stmt& s, std::vector<Stmt>& out) {
  enter_loop(*s.loop);
  mutate_block(s.loop->body);
  leave_loop(*s.loop);
  out.push_back(std::move(s));
}

void for_each_stmt(const std::vector<Stmt>& body, const std::function<void(const Stmt&)>& fn) {
  for (const Stmt& s : body) {
    fn(s);
    if (s.kind == StmtKind::Loop) for_each_stmt(s.loop->body, fn);
  }
}

void for_each_node(const Expr& e, const std::function<void(const Expr&)>& fn) {
  fn(e);
  for (const Expr& c : e->computed)
    if (c) for_each_node(c, fn);
  for (const Expr& a : e->args) for_each_node(a, fn);
}

bool any_node(const Expr& e, const std::function<bool(const Expr&)>& pred) {
  if (pred(e)) return true;
  for (const Expr& c : e->computed)
    if (c && any_node(c, pred)) return true;
  for (const Expr& a : e->args)
    if (any_node(a, pred)) return true;
  return false;
}

bool is_total(const Expr& e) {
  return !any_node(e, [](const Expr& x) {
    if (x->kind == ExprKind::Binary)
      return x->binop == BinOp::Div || x->binop == BinOp::Pow || x->binop == BinOp::Rem;
    if (x->kind != ExprKind::Unary) return false;
    switch (x->unop) {
      case UnOp::Log:
      case UnOp::Sqrt:
      case UnOp::Rsqrt:
      case UnOp::Log2:
      case UnOp::Log10:
      case UnOp::Log1p:
      case UnOp::Tan:
      case UnOp::Asin:
      case UnOp::Acos:
        return true;
      default:
        return false;
    }
  });
}

bool mentions_index(const Expr& e, const std::set<std::string>& indices) {
  return any_node(e, [&](const Expr& x) {
    if (x->kind == ExprKind::Index) return indices.count(x->index) > 0;
    if (x->kind != ExprKind::Read) return false;
    for (const Affine& a : x->indices)
      for (const auto& [name, coef] : a.terms)
        if (indices.count(name)) return true;
    return false;
  });
}

std::vector<Expr> conjuncts(const Expr& e) {
  if (e->kind != ExprKind::Binary || e->binop != BinOp::And) return {e};
  std::vector<Expr> out = conjuncts(e->args[0]);
  for (Expr& part : conjuncts(e->args[1])) out.push_back(std::move(part));
  return out;
}

std::vector<Expr> reads_of(const Expr& e, const Value* tensor) {
  std::vector<Expr> out;
  for_each_node(e, [&](const Expr& x) {
    if (x->kind == ExprKind::Read && (!tensor || x->tensor.get() == tensor)) out.push_back(x);
  });
  return out;
}

namespace {

class Transform : public ExprMutator {
 public:
  explicit Transform(const std::function<Expr(const Expr&)>& replace) : replace_(replace) {}
  Expr mutate(const Expr& e) override {
    if (Expr r = replace_(e)) return r;
    return ExprMutator::mutate(e);
  }

 private:
  const std::function<Expr(const Expr&)>& replace_;
};

class Substitute : public ExprMutator {
 public:
  explicit Substitute(const std::map<std::string, Affine>& indices) : indices_(indices) {}

 protected:
  Expr mutate_index(const Expr& e) override {
    auto it = indices_.find(e->index);
    return it == indices_.end() ? e : affine_value(it->second);
  }
  Affine mutate_affine(const Affine& a) override { return ir::substitute(a, indices_); }

 private:
  const std::map<std::string, Affine>& indices_;
};

class ReplaceTensors : public ExprMutator {
 public:
  explicit ReplaceTensors(const std::map<const Value*, ValuePtr>& to) : to_(to) {}

 protected:
  ValuePtr mutate_tensor(const ValuePtr& tensor) override {
    auto it = to_.find(tensor.get());
    return it == to_.end() ? tensor : it->second;
  }

 private:
  const std::map<const Value*, ValuePtr>& to_;
};

}  // namespace

Expr replace_tensors(const Expr& e, const std::map<const Value*, ValuePtr>& to) {
  return ReplaceTensors(to).mutate(e);
}

Expr transform(const Expr& e, const std::function<Expr(const Expr&)>& replace) {
  return Transform(replace).mutate(e);
}

Expr substitute(const Expr& e, const std::map<std::string, Affine>& indices) {
  return Substitute(indices).mutate(e);
}

}  // namespace tenet::ir
