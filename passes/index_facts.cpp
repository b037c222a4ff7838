// Facts about index ranges and the rewrites they justify (see index_facts.h).
#include "passes/index_facts.h"

#include <algorithm>
#include <functional>
#include <set>

#include "ir/affine.h"
#include "ir/builder.h"
#include "ir/mutator.h"

namespace tenet::passes::detail {

using namespace ir;

bool provably_nonneg(const SizeExpr& e) {
  // A constant, or linear in the symbols with non-negative coefficients and constant.
  const std::set<std::string> symbols = e.symbols();
  const std::optional<Affine> a = affine_in(e, {symbols.begin(), symbols.end()});
  if (!a) return false;
  const std::optional<int64_t> base = a->offset.constant();
  if (!base || *base < 0) return false;
  for (const auto& term : a->terms)
    if (term.second < 0) return false;
  return true;
}

bool known_le(const SizeExpr& a, const SizeExpr& b) {
  return provably_nonneg(b - a);
}

SizeExpr size_min(const SizeExpr& a, const SizeExpr& b) {
  if (known_le(a, b)) return a;
  if (known_le(b, a)) return b;
  return SizeExpr::min(a, b);
}

SizeExpr size_max(const SizeExpr& a, const SizeExpr& b) {
  if (known_le(a, b)) return b;
  if (known_le(b, a)) return a;
  return SizeExpr::max(a, b);
}

namespace {

/// `lhs - rhs` of an equality of two int64 expressions.
std::optional<Affine> as_zero_test(const Expr& cond) {
  if (cond->kind != ExprKind::Binary || cond->binop != BinOp::Eq) return std::nullopt;
  auto a = linear_form(cond->args[0]), b = linear_form(cond->args[1]);
  if (!a || !b) return std::nullopt;
  return *a - *b;
}

}  // namespace

std::optional<Affine> as_negative_test(const Expr& cond) {
  // f >= 0  <=>  -f - 1 < 0.
  if (auto f = nonnegative_form(cond)) return -*f - affine_const(1);
  return std::nullopt;
}

void IndexFacts::add_range(const std::string& index, const SizeExpr& lo, const SizeExpr& hi) {
  add_lower(index, lo);
  add_upper(index, hi);
}

void IndexFacts::add_lower(const std::string& index, const SizeExpr& lo) {
  bounds_[index].lower.push_back(lo);
}

void IndexFacts::add_upper(const std::string& index, const SizeExpr& hi) {
  bounds_[index].upper.push_back(hi);
}

const Bounds* IndexFacts::bounds(const std::string& index) const {
  auto it = bounds_.find(index);
  return it == bounds_.end() ? nullptr : &it->second;
}

namespace {

/// `l < 0` for a one-index l with coefficient +-1, as a bound on that index.
void assume_negative(IndexFacts& facts, const Affine& l) {
  if (l.terms.size() != 1) return;
  const auto& [index, coef] = l.terms[0];
  if (coef == 1) facts.add_upper(index, -l.offset);                // x + off < 0: x < -off
  if (coef == -1) facts.add_lower(index, l.offset + SizeExpr(1));  // off - x < 0: x >= off + 1
}

Affine negated_test(const Affine& l) {  // !(l < 0)  <=>  -l - 1 < 0
  return -l - affine_const(1);
}

}  // namespace

void IndexFacts::assume(const Expr& cond) {
  if (cond->kind == ExprKind::Binary && cond->binop == BinOp::And) {
    assume(cond->args[0]);
    assume(cond->args[1]);
  } else if (cond->kind == ExprKind::Unary && cond->unop == UnOp::Not) {
    assume_not(cond->args[0]);
  } else if (auto l = as_negative_test(cond)) {
    assume_negative(*this, *l);
  } else if (auto d = as_zero_test(cond)) {  // d == 0: d - 1 < 0 and -d - 1 < 0
    assume_negative(*this, *d - affine_const(1));
    assume_negative(*this, negated_test(*d));
  }
}

void IndexFacts::assume_not(const Expr& cond) {
  if (cond->kind == ExprKind::Binary && cond->binop == BinOp::Or) {
    assume_not(cond->args[0]);
    assume_not(cond->args[1]);
  } else if (cond->kind == ExprKind::Unary && cond->unop == UnOp::Not) {
    assume(cond->args[0]);
  } else if (auto l = as_negative_test(cond)) {
    assume_negative(*this, negated_test(*l));
  }
}

std::vector<SizeExpr> IndexFacts::extremes(const Affine& l, bool lowest) const {
  std::vector<SizeExpr> out = {l.offset};
  for (const auto& [index, coef] : l.terms) {
    const Bounds* b = bounds(index);
    if (!b) return {};
    // coef * index is smallest at the lower bound when coef > 0, at upper - 1 otherwise.
    const bool use_lower = (coef > 0) == lowest;
    std::vector<SizeExpr> next;
    for (const SizeExpr& partial : out) {
      if (use_lower)
        for (const SizeExpr& lo : b->lower) next.push_back(partial + SizeExpr(coef) * lo);
      else
        for (const SizeExpr& hi : b->upper)
          next.push_back(partial + SizeExpr(coef) * (hi - SizeExpr(1)));
    }
    out = std::move(next);
  }
  return out;
}

bool IndexFacts::proves_negative(const Affine& l) const {
  for (const SizeExpr& top : extremes(l, false))
    if (known_le(top + SizeExpr(1), SizeExpr(0))) return true;
  return false;
}

std::optional<bool> IndexFacts::decide(const Expr& cond) const {
  if (cond->kind == ExprKind::Const && cond->type == ElemType::Bool) return cond->value != 0;
  if (cond->kind == ExprKind::Unary && cond->unop == UnOp::Not) {
    auto a = decide(cond->args[0]);
    if (!a) return std::nullopt;
    return !*a;
  }
  if (cond->kind == ExprKind::Binary && is_logical(cond->binop)) {
    const bool is_and = cond->binop == BinOp::And;
    auto a = decide(cond->args[0]), b = decide(cond->args[1]);
    // and: false if either is false; or: true if either is true.
    if ((a && *a != is_and) || (b && *b != is_and)) return !is_and;
    if (a && b) return is_and;
    return std::nullopt;
  }
  if (auto d = as_zero_test(cond)) {
    if (proves_negative(*d) || proves_negative(-*d)) return false;
    if (proves_negative(negated_test(*d)) && proves_negative(negated_test(-*d))) return true;
    return std::nullopt;
  }
  auto l = as_negative_test(cond);
  if (!l) return std::nullopt;
  if (proves_negative(*l)) return true;
  if (proves_negative(negated_test(*l))) return false;
  return std::nullopt;
}

bool IndexFacts::in_bounds(const Affine& a, const SizeExpr& extent) const {
  // a >= 0  <=>  -a - 1 < 0;  a < extent  <=>  a - extent < 0.
  return proves_negative(negated_test(a)) && proves_negative(a - affine_const(extent));
}

namespace {

bool all_in_bounds(const ExprNode& read, const IndexFacts& facts) {
  if (read.has_computed_index()) return false;  // data-dependent: no fact decides it
  for (size_t d = 0; d < read.indices.size(); ++d)
    if (!facts.in_bounds(read.indices[d], read.tensor->shape[d])) return false;
  return true;
}

}  // namespace

Expr refine(const Expr& e, const IndexFacts& facts) {
  if (e->type == ElemType::Bool && e->kind != ExprKind::Const && e->kind != ExprKind::Read)
    if (auto known = facts.decide(e)) return make_const(*known ? 1 : 0, ElemType::Bool);
  if (e->kind == ExprKind::Read) {
    if (e->guarded && all_in_bounds(*e, facts)) return make_read(e->tensor, e->indices, false);
    return e;
  }
  if (e->kind == ExprKind::Select) {
    if (auto known = facts.decide(e->args[0])) return refine(e->args[*known ? 1 : 2], facts);
    IndexFacts then_facts = facts, else_facts = facts;
    then_facts.assume(e->args[0]);
    else_facts.assume_not(e->args[0]);
    return make_select(refine(e->args[0], facts), refine(e->args[1], then_facts),
                       refine(e->args[2], else_facts));
  }
  std::vector<Expr> args;
  bool changed = false;
  for (const Expr& a : e->args) {
    args.push_back(refine(a, facts));
    changed = changed || args.back() != a;
  }
  return changed ? with_args(e, std::move(args)) : e;
}

bool safe_to_evaluate(const Expr& e, const IndexFacts& facts) {
  return !any_node(e, [&](const Expr& x) {
    return (x->kind == ExprKind::Read && !x->guarded && !all_in_bounds(*x, facts)) ||
           (x->kind == ExprKind::Binary && x->binop == BinOp::Div && !is_float(x->type));
  });
}

bool mentions_any(const Expr& e, const std::vector<Dim>& indices) {
  std::set<std::string> names;
  for (const Dim& d : indices) names.insert(d.index);
  return mentions_index(e, names);
}

bool reads_tensor(const Expr& e) {
  return any_node(e, [](const Expr& x) { return x->kind == ExprKind::Read; });
}

Expr shift_index(const Expr& e, const std::string& index, const SizeExpr& shift) {
  return substitute(e, {{index, Affine::var(index) + affine_const(shift)}});
}

FreshValues::FreshValues(const Function& fn) {
  auto note = [&](const ValuePtr& v) {
    if (!v) return;
    next_id_ = std::max(next_id_, v->id + 1);
    taken_[v->name] = 1;
  };
  for (const ValuePtr& v : fn.inputs) note(v);
  for_each_stmt(fn.body, [&](const Stmt& s) {
    if (s.kind == StmtKind::Compute) {
      note(s.compute.result);
      return;
    }
    for (const Loop::Carried& c : s.loop->carried) {
      note(c.param);
      note(c.next);
      note(c.result);
    }
  });
}

ValuePtr FreshValues::make(const std::string& base, ElemType type, std::vector<SizeExpr> shape,
                           const Span& span) {
  std::string name = base;
  for (int n = 1; taken_.count(name); ++n) name = base + "_" + std::to_string(n);
  taken_[name] = 1;
  return make_value(next_id_++, name, type, std::move(shape), span);
}

namespace {

/// Rewrites the computes of a block, knowing the enclosing loops' ranges.
class FactsRewriter : public StmtMutator {
 public:
  using Rewrite = std::function<void(Stmt&, const IndexFacts&, std::vector<Stmt>&)>;
  FactsRewriter(const IndexFacts& outer, const Rewrite& rewrite)
      : facts_{outer}, rewrite_(rewrite) {}

 protected:
  void mutate_compute(Stmt& s, std::vector<Stmt>& out) override { rewrite_(s, facts_.back(), out); }
  void enter_loop(const Loop& loop) override {
    facts_.push_back(facts_.back());
    facts_.back().add_range(loop.var, SizeExpr(0), SizeExpr(loop.trip));
  }
  void leave_loop(const Loop&) override { facts_.pop_back(); }

 private:
  std::vector<IndexFacts> facts_;  // innermost loop's last
  const Rewrite& rewrite_;
};

}  // namespace

void rewrite_statements(
    std::vector<Stmt>& body, const IndexFacts& outer,
    const std::function<void(Stmt& s, const IndexFacts& facts, std::vector<Stmt>& out)>& rewrite) {
  FactsRewriter(outer, rewrite).mutate_block(body);
}

}  // namespace tenet::passes::detail
