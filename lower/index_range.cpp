#include "lower/index_range.h"

#include <algorithm>

#include "ir/mutator.h"

namespace tenet::lower {

namespace {

// Bounds beyond this are treated as unknown: sums and products of known
// sides stay far from overflowing.
constexpr int64_t kLimit = int64_t(1) << 30;

std::optional<int64_t> known(std::optional<int64_t> v) {
  if (v && (*v < -kLimit || *v > kLimit)) return std::nullopt;
  return v;
}

Interval interval(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  return {known(lo), known(hi)};
}

std::optional<int64_t> add(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a || !b) return std::nullopt;
  return *a + *b;
}

Interval product(const Interval& a, const Interval& b) {
  if (!a.lo || !a.hi || !b.lo || !b.hi) {
    // Non-negative times non-negative stays non-negative.
    if (a.lo && b.lo && *a.lo >= 0 && *b.lo >= 0) return interval(*a.lo * *b.lo, std::nullopt);
    return {};
  }
  const int64_t p[] = {*a.lo * *b.lo, *a.lo * *b.hi, *a.hi * *b.lo, *a.hi * *b.hi};
  return interval(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
}

}  // namespace

Interval value_range(const ir::Expr& e, const IndexRanges& indices) {
  switch (e->kind) {
    case ir::ExprKind::Const:
      return interval(int64_t(e->value), int64_t(e->value));
    case ir::ExprKind::Index: {
      auto it = indices.find(e->index);
      if (it == indices.end()) return {};
      auto hi = it->second.hi.constant();
      return interval(it->second.lo.constant(), hi ? std::optional(*hi - 1) : std::nullopt);
    }
    case ir::ExprKind::Read: {  // narrow integers: their type's range
      if (byte_size(e->type) > 2) return {};
      auto [lo, hi] = int_range(e->type);
      return interval(lo, hi);
    }
    case ir::ExprKind::Cast:
      if (is_float(e->args[0]->type)) return {};
      return value_range(e->args[0], indices);  // widening to int64 keeps the value
    case ir::ExprKind::Binary: {
      const Interval a = value_range(e->args[0], indices), b = value_range(e->args[1], indices);
      const bool constant_divisor = b.lo && b.hi && *b.lo == *b.hi && *b.lo > 0;
      switch (e->binop) {
        case ir::BinOp::Add:
          return interval(add(a.lo, b.lo), add(a.hi, b.hi));
        case ir::BinOp::Sub:
          return interval(add(a.lo, b.hi ? std::optional(-*b.hi) : std::nullopt),
                          add(a.hi, b.lo ? std::optional(-*b.lo) : std::nullopt));
        case ir::BinOp::Mul:
          return product(a, b);
        case ir::BinOp::Rem:  // C's sign, that of the dividend
          if (!constant_divisor || !a.lo || *a.lo < 0) return {};
          return interval(0, a.hi ? std::min(*a.hi, *b.lo - 1) : *b.lo - 1);
        case ir::BinOp::Div:
          if (!constant_divisor || !a.lo || *a.lo < 0) return {};
          return interval(*a.lo / *b.lo, a.hi ? std::optional(*a.hi / *b.lo) : std::nullopt);
        default:
          return {};
      }
    }
    default:
      return {};
  }
}

bool provably_in_extent(const ir::Expr& index, const ir::SizeExpr& extent,
                        const IndexRanges& indices) {
  const Interval r = value_range(index, indices);
  const std::optional<int64_t> n = extent.constant();
  return r.lo && r.hi && n && *r.lo >= 0 && *r.hi < *n;
}

bool has_checked_index(const ir::Expr& e, bool check) {
  return check && ir::any_node(e, [](const ir::Expr& x) {
           return x->kind == ir::ExprKind::Read && x->has_computed_index();
         });
}

}  // namespace tenet::lower
