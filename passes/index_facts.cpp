// Facts about index ranges and the rewrites they justify (see index_facts.h).
#include "passes/index_facts.h"

#include <functional>

#include "ir/builder.h"

namespace tenet::passes::detail {

using namespace ir;

bool provably_nonneg(const SizeExpr& e) {
  if (auto c = e.constant()) return *c >= 0;
  std::map<std::string, SizeExpr> zero;
  for (const std::string& s : e.symbols()) zero[s] = SizeExpr(0);
  const std::optional<int64_t> base = e.substitute(zero).constant();
  if (!base || *base < 0) return false;
  // Rebuild e as base + sum(coef * symbol); equal only when e is linear.
  SizeExpr linear(*base);
  for (const std::string& s : e.symbols()) {
    auto at = zero;
    at[s] = SizeExpr(1);
    const std::optional<int64_t> value = e.substitute(at).constant();
    if (!value || *value < *base) return false;
    linear = linear + SizeExpr(*value - *base) * SizeExpr::sym(s);
  }
  return linear == e;
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

Linear scaled(Linear l, int64_t k) {
  for (auto& [index, coef] : l.terms) coef *= k;
  l.offset = l.offset * SizeExpr(k);
  return l;
}

Linear plus(Linear a, const Linear& b) {
  for (const auto& [index, coef] : b.terms)
    if ((a.terms[index] += coef) == 0) a.terms.erase(index);
  a.offset = a.offset + b.offset;
  return a;
}

bool is_int_const(const Expr& e) {
  return e->kind == ExprKind::Const && e->type == ElemType::I64;
}

}  // namespace

std::optional<Linear> linear_form(const Expr& e) {
  if (e->type != ElemType::I64) return std::nullopt;
  switch (e->kind) {
    case ExprKind::Index:
      return Linear{{{e->index, 1}}, SizeExpr(0)};
    case ExprKind::Size:
      return Linear{{}, e->size};
    case ExprKind::Const:
      return Linear{{}, SizeExpr(int64_t(e->value))};
    case ExprKind::Unary: {
      if (e->unop != UnOp::Neg) return std::nullopt;
      auto a = linear_form(e->args[0]);
      if (!a) return std::nullopt;
      return scaled(*a, -1);
    }
    case ExprKind::Binary: {
      if (e->binop == BinOp::Mul) {
        for (int c : {0, 1})
          if (is_int_const(e->args[size_t(c)])) {
            auto other = linear_form(e->args[size_t(1 - c)]);
            if (!other) return std::nullopt;
            return scaled(*other, int64_t(e->args[size_t(c)]->value));
          }
        return std::nullopt;
      }
      if (e->binop != BinOp::Add && e->binop != BinOp::Sub) return std::nullopt;
      auto a = linear_form(e->args[0]), b = linear_form(e->args[1]);
      if (!a || !b) return std::nullopt;
      return plus(*a, e->binop == BinOp::Add ? *b : scaled(*b, -1));
    }
    default:
      return std::nullopt;
  }
}

namespace {

/// `lhs - rhs` of an equality of two int64 expressions.
std::optional<Linear> as_zero_test(const Expr& cond) {
  if (cond->kind != ExprKind::Binary || cond->binop != BinOp::Eq) return std::nullopt;
  auto a = linear_form(cond->args[0]), b = linear_form(cond->args[1]);
  if (!a || !b) return std::nullopt;
  return plus(*a, scaled(*b, -1));
}

}  // namespace

std::optional<Linear> as_negative_test(const Expr& cond) {
  if (cond->kind != ExprKind::Binary || !is_comparison(cond->binop)) return std::nullopt;
  auto a = linear_form(cond->args[0]), b = linear_form(cond->args[1]);
  if (!a || !b) return std::nullopt;
  const Linear diff = plus(*a, scaled(*b, -1));  // the comparison is `diff OP 0`
  const Linear one{{}, SizeExpr(1)};
  switch (cond->binop) {
    case BinOp::Lt:
      return diff;
    case BinOp::Le:  // diff <= 0  <=>  diff - 1 < 0
      return plus(diff, scaled(one, -1));
    case BinOp::Gt:  // diff > 0  <=>  -diff < 0
      return scaled(diff, -1);
    case BinOp::Ge:  // diff >= 0  <=>  -diff - 1 < 0
      return plus(scaled(diff, -1), scaled(one, -1));
    default:
      return std::nullopt;
  }
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
void assume_negative(IndexFacts& facts, const Linear& l) {
  if (l.terms.size() != 1) return;
  const auto& [index, coef] = *l.terms.begin();
  if (coef == 1) facts.add_upper(index, -l.offset);                // x + off < 0: x < -off
  if (coef == -1) facts.add_lower(index, l.offset + SizeExpr(1));  // off - x < 0: x >= off + 1
}

Linear negated_test(const Linear& l) {  // !(l < 0)  <=>  -l - 1 < 0
  return plus(scaled(l, -1), Linear{{}, SizeExpr(-1)});
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
    assume_negative(*this, plus(*d, Linear{{}, SizeExpr(-1)}));
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

std::vector<SizeExpr> IndexFacts::extremes(const Linear& l, bool lowest) const {
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

bool IndexFacts::proves_negative(const Linear& l) const {
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
    if (proves_negative(*d) || proves_negative(scaled(*d, -1))) return false;
    if (proves_negative(negated_test(*d)) && proves_negative(negated_test(scaled(*d, -1))))
      return true;
    return std::nullopt;
  }
  auto l = as_negative_test(cond);
  if (!l) return std::nullopt;
  if (proves_negative(*l)) return true;
  if (proves_negative(negated_test(*l))) return false;
  return std::nullopt;
}

bool IndexFacts::in_bounds(const Affine& a, const SizeExpr& extent) const {
  Linear l{{}, a.offset};
  for (const auto& [index, coef] : a.terms) l.terms[index] = coef;
  // a >= 0  <=>  -a - 1 < 0;  a < extent  <=>  a - extent < 0.
  return proves_negative(negated_test(l)) && proves_negative(plus(l, Linear{{}, -extent}));
}

namespace {

bool all_in_bounds(const ExprNode& read, const IndexFacts& facts) {
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
  if (e->kind == ExprKind::Read && !e->guarded && !all_in_bounds(*e, facts)) return false;
  if (e->kind == ExprKind::Binary && e->binop == BinOp::Div && !is_float(e->type)) return false;
  for (const Expr& a : e->args)
    if (!safe_to_evaluate(a, facts)) return false;
  return true;
}

bool mentions_any(const Expr& e, const std::vector<Dim>& indices) {
  for (const Dim& d : indices) {
    if (e->kind == ExprKind::Index && e->index == d.index) return true;
    if (e->kind == ExprKind::Read)
      for (const Affine& a : e->indices)
        if (a.coef(d.index) != 0) return true;
  }
  for (const Expr& a : e->args)
    if (mentions_any(a, indices)) return true;
  return false;
}

bool reads_tensor(const Expr& e) {
  if (e->kind == ExprKind::Read) return true;
  for (const Expr& a : e->args)
    if (reads_tensor(a)) return true;
  return false;
}

Expr shift_index(const Expr& e, const std::string& index, const SizeExpr& shift) {
  if (e->kind == ExprKind::Index && e->index == index)
    return make_binary(BinOp::Add, e, make_size(shift));
  if (e->kind == ExprKind::Read) {
    std::vector<Affine> indices = e->indices;
    for (Affine& a : indices) a.offset = a.offset + SizeExpr(a.coef(index)) * shift;
    return make_read(e->tensor, indices, e->guarded);
  }
  std::vector<Expr> args;
  for (const Expr& a : e->args) args.push_back(shift_index(a, index, shift));
  return with_args(e, std::move(args));
}

FreshValues::FreshValues(const Function& fn) {
  auto note = [&](const ValuePtr& v) {
    if (!v) return;
    next_id_ = std::max(next_id_, v->id + 1);
    taken_[v->name] = 1;
  };
  std::function<void(const std::vector<Stmt>&)> block = [&](const std::vector<Stmt>& body) {
    for (const Stmt& s : body) {
      if (s.kind == StmtKind::Compute) {
        note(s.compute.result);
        continue;
      }
      for (const Loop::Carried& c : s.loop->carried) {
        note(c.param);
        note(c.next);
        note(c.result);
      }
      block(s.loop->body);
    }
  };
  for (const ValuePtr& v : fn.inputs) note(v);
  block(fn.body);
}

ValuePtr FreshValues::make(const std::string& base, ElemType type, std::vector<SizeExpr> shape,
                           const Span& span) {
  std::string name = base;
  for (int n = 1; taken_.count(name); ++n) name = base + "_" + std::to_string(n);
  taken_[name] = 1;
  auto v = std::make_shared<Value>();
  v->id = next_id_++;
  v->name = name;
  v->type = type;
  v->shape = std::move(shape);
  v->span = span;
  return v;
}

void rewrite_statements(
    std::vector<Stmt>& body, const IndexFacts& outer,
    const std::function<void(Stmt& s, const IndexFacts& facts, std::vector<Stmt>& out)>& rewrite) {
  std::vector<Stmt> out;
  for (Stmt& s : body) {
    if (s.kind == StmtKind::Loop) {
      IndexFacts inner = outer;
      inner.add_range(s.loop->var, SizeExpr(0), SizeExpr(s.loop->trip));
      rewrite_statements(s.loop->body, inner, rewrite);
      out.push_back(std::move(s));
    } else {
      rewrite(s, outer, out);
    }
  }
  body = std::move(out);
}

}  // namespace tenet::passes::detail
