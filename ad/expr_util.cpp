#include "ad/expr_util.h"

#include <cmath>

#include "ir/mutator.h"
#include "support/error.h"

namespace tenet::ad {

using ir::Affine;
using ir::BinOp;
using ir::Expr;
using ir::ExprKind;
using ir::UnOp;

ir::Expr constant(double value, ElemType type) {
  return ir::make_const(value, type);
}

bool is_constant(const Expr& e, double value) {
  return e->kind == ExprKind::Const && e->value == value;
}

namespace {
bool both_const(const Expr& a, const Expr& b) {
  return a->kind == ExprKind::Const && b->kind == ExprKind::Const;
}
}  // namespace

Expr add(Expr a, Expr b) {
  if (is_constant(a, 0)) return b;
  if (is_constant(b, 0)) return a;
  if (both_const(a, b)) return constant(a->value + b->value, a->type);
  if (b->kind == ExprKind::Unary && b->unop == UnOp::Neg) return sub(a, b->args[0]);
  return ir::make_binary(BinOp::Add, std::move(a), std::move(b));
}

Expr sub(Expr a, Expr b) {
  if (is_constant(b, 0)) return a;
  if (is_constant(a, 0)) return neg(b);
  if (both_const(a, b)) return constant(a->value - b->value, a->type);
  return ir::make_binary(BinOp::Sub, std::move(a), std::move(b));
}

Expr mul(Expr a, Expr b) {
  if (is_constant(a, 0) || is_constant(b, 0)) return constant(0, a->type);
  if (is_constant(a, 1)) return b;
  if (is_constant(b, 1)) return a;
  if (is_constant(a, -1)) return neg(b);
  if (is_constant(b, -1)) return neg(a);
  if (both_const(a, b)) return constant(a->value * b->value, a->type);
  // Pull negations out so `-d * w` prints as `-(d * w)` at most once.
  if (a->kind == ExprKind::Unary && a->unop == UnOp::Neg) return neg(mul(a->args[0], b));
  if (b->kind == ExprKind::Unary && b->unop == UnOp::Neg) return neg(mul(a, b->args[0]));
  return ir::make_binary(BinOp::Mul, std::move(a), std::move(b));
}

Expr div(Expr a, Expr b) {
  if (is_constant(a, 0)) return a;
  if (is_constant(b, 1)) return a;
  if (a->kind == ExprKind::Unary && a->unop == UnOp::Neg) return neg(div(a->args[0], b));
  return ir::make_binary(BinOp::Div, std::move(a), std::move(b));
}

Expr neg(Expr a) {
  if (a->kind == ExprKind::Const) return constant(-a->value, a->type);
  if (a->kind == ExprKind::Unary && a->unop == UnOp::Neg) return a->args[0];
  return ir::make_unary(UnOp::Neg, std::move(a));
}

Expr pow(Expr a, Expr b) {
  if (is_constant(b, 1)) return a;
  if (is_constant(b, 0)) return constant(1, a->type);
  return ir::make_binary(BinOp::Pow, std::move(a), std::move(b));
}

Expr select(Expr cond, Expr a, Expr b) {
  if (both_const(a, b) && a->value == b->value) return a;
  if (cond->kind == ExprKind::Const) return cond->value != 0 ? a : b;
  return ir::make_select(std::move(cond), std::move(a), std::move(b));
}

Expr both(Expr a, Expr b) {
  if (!a) return b;
  if (!b) return a;
  return ir::make_binary(BinOp::And, std::move(a), std::move(b));
}

std::string stem(const std::string& name) {
  return name.substr(0, name.find('.'));
}

namespace {

class Rewriter : public ir::ExprMutator {
 public:
  explicit Rewriter(const Rewrite& rw) : rw_(rw) {}

 protected:
  Expr mutate_const(const Expr& e) override {
    if (rw_.float_type && is_float(e->type)) return constant(e->value, *rw_.float_type);
    return e;
  }

  Expr mutate_index(const Expr& e) override {
    auto it = rw_.indices.find(e->index);
    return it == rw_.indices.end() ? e : ir::affine_value(it->second);
  }

  Expr mutate_read(const Expr& e) override {
    auto it = rw_.values.find(e->tensor.get());
    const ir::ValuePtr& tensor = it == rw_.values.end() ? e->tensor : it->second;
    bool needs_guard = false, in_bounds = true;
    std::vector<Affine> indices;
    for (size_t d = 0; d < e->indices.size(); ++d) {
      needs_guard = needs_guard || ir::mentions(e->indices[d], rw_.guard_indices);
      indices.push_back(ir::substitute(e->indices[d], rw_.indices));
      auto b = indices.back().is_plain_var() ? rw_.bounded.find(indices.back().terms[0].first)
                                             : rw_.bounded.end();
      in_bounds = in_bounds && b != rw_.bounded.end() && b->second == tensor->shape[d];
    }
    std::vector<Expr> computed;
    for (const Expr& c : e->computed) {
      computed.push_back(c ? mutate(c) : nullptr);
      if (c) {
        in_bounds = false;  // data-dependent: no range makes it so
        needs_guard = needs_guard || ir::any_node(c, [&](const Expr& x) {
                        return x->kind == ExprKind::Index && rw_.guard_indices.count(x->index);
                      });
      }
    }
    return ir::make_read(tensor, std::move(indices), std::move(computed),
                         e->guarded || (needs_guard && !in_bounds));
  }

  Expr mutate_cast(const Expr& e) override {
    ElemType to = rw_.float_type && is_float(e->type) ? *rw_.float_type : e->type;
    Expr a = mutate(e->args[0]);
    // An unrolled loop variable: float32(r) becomes 2:float32 (exact below 2^24).
    if (a->kind == ExprKind::Const && is_int(a->type) && is_float(to) &&
        std::abs(a->value) < 16777216)
      return constant(a->value, to);
    return a == e->args[0] && to == e->type ? e : ir::make_cast(a, to);
  }

 private:
  const Rewrite& rw_;
};

}  // namespace

Expr rewrite(const Expr& e, const Rewrite& rw) {
  return Rewriter(rw).mutate(e);
}

std::vector<Expr> factors(const Expr& e) {
  if (e->kind != ExprKind::Binary || e->binop != BinOp::Mul) return {e};
  std::vector<Expr> out = factors(e->args[0]);
  for (const Expr& f : factors(e->args[1])) out.push_back(f);
  return out;
}

}  // namespace tenet::ad
