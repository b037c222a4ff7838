// Reduce loop bounds from the guards of their bodies (loop_bounds.h).
#include "lower/loop_bounds.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "ir/affine.h"
#include "ir/builder.h"
#include "ir/mutator.h"

namespace tenet::lower {

namespace {

bool is_identity(const ir::Expr& e, ir::ReduceOp op) {
  if (e->kind != ir::ExprKind::Const) return false;
  switch (op) {
    case ir::ReduceOp::Sum:
      return e->value == 0;
    case ir::ReduceOp::Max:
      return is_float(e->type) && std::isinf(e->value) && e->value < 0;
    case ir::ReduceOp::Min:
      return is_float(e->type) && std::isinf(e->value) && e->value > 0;
    case ir::ReduceOp::Prod:
      return e->value == 1;
    case ir::ReduceOp::None:
      break;
  }
  return false;
}

/// The smallest (or largest) value `a` takes over the index ranges, as a size expression.
ir::SizeExpr extreme(const ir::Affine& a, const IndexRanges& ranges, bool largest) {
  ir::SizeExpr v = a.offset;
  for (const auto& [index, coef] : a.terms) {
    const IndexRange& r = ranges.at(index);
    v = v + ((coef > 0) == largest ? r.hi - 1 : r.lo) * coef;
  }
  return v;
}

bool provably_in_range(const ir::Affine& a, const ir::SizeExpr& extent, const IndexRanges& ranges) {
  for (const auto& term : a.terms)
    if (!ranges.count(term.first)) return false;
  return ir::provably_le(0, extreme(a, ranges, false)) &&
         ir::provably_le(extreme(a, ranges, true), extent - 1);
}

/// Turns conditions into loop bounds where they can be.
class Narrower {
 public:
  Narrower(const ir::Compute& c, const std::vector<std::string>& loop_order,
           const IndexRanges& ranges)
      : c_(c), ranges_(ranges), out_{c.body, std::vector<ReduceRange>(c.reduce.size())} {
    for (size_t i = 0; i < loop_order.size(); ++i) position_[loop_order[i]] = int(i);
    for (size_t i = 0; i < c.reduce.size(); ++i) reduce_at_[c.reduce[i].index] = i;
  }

  GuardBounds run() {
    if (c_.op != ir::ReduceOp::None) out_.body = narrow(c_.body);
    return out_;
  }

 private:
  /// `e` without the conditions that became bounds.
  ir::Expr narrow(const ir::Expr& e) {
    if (e->kind == ir::ExprKind::Select && is_identity(e->args[2], c_.op)) {
      std::vector<ir::Expr> kept;
      for (const ir::Expr& k : ir::conjuncts(e->args[0]))
        if (!bound(k)) kept.push_back(k);
      ir::Expr value = narrow(e->args[1]);
      if (kept.empty()) return value;
      ir::Expr cond = kept[0];
      for (size_t i = 1; i < kept.size(); ++i)
        cond = ir::make_binary(ir::BinOp::And, cond, kept[i]);
      return ir::make_select(cond, value, e->args[2]);
    }
    if (c_.op != ir::ReduceOp::Sum) return e;
    // Out of bounds a guarded read is 0, the identity of a sum, and so is a
    // product with it as a factor when no factor can be infinite or NaN.
    if (e->kind == ir::ExprKind::Read && e->guarded) return narrow_read(e);
    if (e->kind == ir::ExprKind::Binary && e->binop == ir::BinOp::Mul && ir::is_total(e))
      return narrow_factors(e);
    return e;
  }

  /// A product with its guarded read factors made plain where the bounds
  /// enforce every in-bounds condition (the same products, in the same order).
  ir::Expr narrow_factors(const ir::Expr& e) {
    if (e->kind == ir::ExprKind::Read && e->guarded) return narrow_read(e);
    if (e->kind != ir::ExprKind::Binary || e->binop != ir::BinOp::Mul) return e;
    return ir::make_binary(ir::BinOp::Mul, narrow_factors(e->args[0]), narrow_factors(e->args[1]));
  }

  ir::Expr narrow_read(const ir::Expr& e) {
    if (e->has_computed_index()) return e;  // its guard is data-dependent
    bool all = true;
    for (size_t d = 0; d < e->indices.size(); ++d) {
      const ir::Affine& index = e->indices[d];
      if (provably_in_range(index, e->tensor->shape[d], ranges_)) continue;
      const ir::Affine below_extent = ir::affine_const(e->tensor->shape[d] - 1) - index;
      all = bound(index) && bound(below_extent) && all;
    }
    return all ? ir::make_read(e->tensor, e->indices, false) : e;
  }

  bool bound(const ir::Expr& condition) {
    auto f = ir::nonnegative_form(condition);
    if (f) return bound(*f);
    return data_bound(condition);
  }

  /// `r op E` (or `E op r`) for a reduce index r and an int64 E of indices
  /// bound outside r's loop: a data-dependent first or end of r's loop.
  bool data_bound(const ir::Expr& cmp) {
    if (cmp->kind != ir::ExprKind::Binary) return false;
    ir::BinOp op = cmp->binop;
    if (op != ir::BinOp::Lt && op != ir::BinOp::Le && op != ir::BinOp::Gt && op != ir::BinOp::Ge)
      return false;
    ir::Expr r = cmp->args[0], e = cmp->args[1];
    if (r->kind != ir::ExprKind::Index) {
      std::swap(r, e);
      op = op == ir::BinOp::Lt   ? ir::BinOp::Gt
           : op == ir::BinOp::Le ? ir::BinOp::Ge
           : op == ir::BinOp::Gt ? ir::BinOp::Lt
                                 : ir::BinOp::Le;
    }
    if (r->kind != ir::ExprKind::Index || e->type != ElemType::I64) return false;
    auto at = reduce_at_.find(r->index);
    if (at == reduce_at_.end()) return false;
    std::set<std::string> inner;  // r and the loops inside it
    for (const auto& [index, at_position] : position_)
      if (at_position >= position_.at(r->index)) inner.insert(index);
    if (ir::mentions_index(e, inner)) return false;
    const ir::Expr one = ir::make_const(1, ElemType::I64);
    ReduceRange& range = out_.reduce[at->second];
    switch (op) {
      case ir::BinOp::Ge:  // r >= e
        range.first.push_back(e);
        break;
      case ir::BinOp::Gt:
        range.first.push_back(ir::make_binary(ir::BinOp::Add, e, one));
        break;
      case ir::BinOp::Lt:  // r < e
        range.end.push_back(e);
        break;
      default:  // r <= e
        range.end.push_back(ir::make_binary(ir::BinOp::Add, e, one));
        break;
    }
    return true;
  }

  /// Makes `f >= 0` a bound of its innermost index's loop, if that is a reduce loop.
  bool bound(const ir::Affine& f) {
    std::string inner;
    int inner_at = -1;
    for (const auto& [index, coef] : f.terms) {
      auto it = position_.find(index);
      const int at = it == position_.end() ? -1 : it->second;  // -1: an enclosing loop
      if (at > inner_at) inner = index, inner_at = at;
    }
    auto r = reduce_at_.find(inner);
    if (inner_at < 0 || r == reduce_at_.end()) return false;
    const int64_t a = f.coef(inner);
    const ir::Affine rest = f - ir::Affine::var(inner) * a;
    // Numerators' terms in name order, as the C++ printed from them always had.
    ReduceRange& range = out_.reduce[r->second];
    if (a > 0)
      range.lower.push_back({ir::sorted(-rest), a});
    else
      range.upper.push_back({ir::sorted(rest), -a});
    return true;
  }

  const ir::Compute& c_;
  const IndexRanges& ranges_;
  GuardBounds out_;
  std::map<std::string, int> position_;
  std::map<std::string, size_t> reduce_at_;
};

}  // namespace

GuardBounds infer_guard_bounds(const ir::Compute& c, const std::vector<std::string>& loop_order,
                               const IndexRanges& ranges) {
  return Narrower(c, loop_order, ranges).run();
}

IndexExpr loop_start(const ir::Dim& d, const ReduceRange& range, const IndexRanges& ranges) {
  std::vector<IndexExpr> terms;
  // ceil(n / k) >= lo exactly when n >= (lo - 1) * k + 1.
  bool implied = false;
  for (const LoopBound& b : range.lower)
    implied =
        implied || ir::provably_le((d.lo - 1) * b.divisor + 1, extreme(b.numerator, ranges, false));
  if (!implied) terms.push_back(ix::size(d.lo));
  for (const LoopBound& b : range.lower) {
    IndexExpr n = ix::affine(b.numerator);
    terms.push_back(b.divisor == 1 ? n
                                   : ix::binary(IndexKind::CeilDiv, n, ix::constant(b.divisor)));
  }
  for (const ir::Expr& e : range.first) terms.push_back(ix::value(e));
  return ix::fold(IndexKind::Max, terms);
}

IndexExpr loop_end(const ir::Dim& d, const ReduceRange& range, const IndexRanges& ranges) {
  std::vector<IndexExpr> terms;
  // floor(n / k) + 1 <= hi exactly when n <= hi * k - 1.
  bool implied = false;
  for (const LoopBound& b : range.upper)
    implied = implied || ir::provably_le(extreme(b.numerator, ranges, true), d.hi * b.divisor - 1);
  if (!implied) terms.push_back(ix::size(d.hi));
  for (const LoopBound& b : range.upper) {
    if (b.divisor == 1) {
      ir::Affine end = b.numerator;
      end.offset = end.offset + 1;
      terms.push_back(ix::affine(end));
      continue;
    }
    IndexExpr n = ix::affine(b.numerator);
    terms.push_back(ix::binary(IndexKind::Add,
                               ix::binary(IndexKind::FloorDiv, n, ix::constant(b.divisor)),
                               ix::constant(1)));
  }
  for (const ir::Expr& e : range.end) terms.push_back(ix::value(e));
  return ix::fold(IndexKind::Min, terms);
}

std::optional<int64_t> window_trip_count(const ReduceRange& range) {
  std::optional<int64_t> best;
  for (const LoopBound& lo : range.lower)
    for (const LoopBound& hi : range.upper) {
      if (lo.divisor != hi.divisor || lo.numerator.terms != hi.numerator.terms) continue;
      auto width = ir::const_difference(hi.numerator.offset, lo.numerator.offset);
      if (!width) continue;
      // ceil(n / k) <= r <= floor((n + width) / k): at most width / k + 1 values.
      const int64_t trips = *width < 0 ? 0 : *width / lo.divisor + 1;
      best = best ? std::min(*best, trips) : trips;
    }
  return best;
}

std::optional<IndexExpr> single_iteration(const ir::Dim& d, const ReduceRange& range,
                                          const IndexRanges& ranges) {
  if (range.lower.size() != 1 || range.upper.size() != 1 || !range.first.empty() ||
      !range.end.empty())
    return std::nullopt;
  const LoopBound &lo = range.lower[0], &hi = range.upper[0];
  if (lo.divisor != hi.divisor || lo.numerator.terms != hi.numerator.terms) return std::nullopt;
  // ceil(n / k) <= r <= floor((n + k - 1) / k) holds for exactly one r.
  auto width = ir::const_difference(hi.numerator.offset, lo.numerator.offset);
  if (!width || *width != hi.divisor - 1) return std::nullopt;
  // ... which must lie in d's own range for every value of the outer indices.
  const ir::SizeExpr smallest = extreme(lo.numerator, ranges, false);
  const ir::SizeExpr largest = extreme(hi.numerator, ranges, true);
  if (!ir::provably_le((d.lo - 1) * lo.divisor + 1, smallest) ||
      !ir::provably_le(largest, d.hi * hi.divisor - 1))
    return std::nullopt;
  const IndexExpr n = ix::affine(hi.numerator);
  if (hi.divisor == 1) return n;
  // A numerator never negative divides with truncation (a shift for powers of two).
  const IndexKind div = ir::provably_le(0, extreme(hi.numerator, ranges, false))
                            ? IndexKind::Div
                            : IndexKind::FloorDiv;
  return ix::binary(div, n, ix::constant(hi.divisor));
}

}  // namespace tenet::lower
