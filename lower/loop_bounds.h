/// \file
/// Reduce loops narrowed to the iterations where their body can be nonzero.
///
/// The gradient of a strided or padded read is a gather that reduces over
/// every position under a guard, `d_img(h) +=! select(h - 2*y >= 0 && h - 2*y
/// < 2, ..., 0)` over all y: most iterations add the reduction's identity.
/// When a reduction's body is `select(cond, e, identity)` (nested selects
/// too) or, for a sum, a guarded read `t?(...)` or a product with guarded
/// reads among its factors (the whole value, or the value of such a select),
/// each conjunct of cond and each in-bounds condition of such a read that is
/// an affine inequality `a*r + rest >= 0` in a reduce index r, where every
/// index of `rest` is bound by a loop outside r's, becomes a bound of r's
/// loop (r >= ceil(-rest / a) for a > 0, r <= floor(rest / -a) for a < 0)
/// instead of a test in every iteration (a read whose every test became a
/// bound is emitted plain). So does a comparison of r with an int64
/// expression of outer indices that reads tensors (`k >= start(b)`, a
/// data-dependent where clause): the loop runs from max(lo, start(b)).
///
/// For every backend (lower/README.md). Expects: a verified Compute, the order of its loops
/// and the ranges of every index in scope. Guarantees: the narrowed loops
/// visit, in ascending order, exactly those iterations of the original ranges
/// where the dropped conditions hold, and the returned body equals the
/// original on them; every skipped iteration would have folded in the
/// identity (0 for sums, -inf/+inf for float max/min), so each element
/// reduces the same terms in the same order, bit for bit as before. The one
/// exception is the product with a guarded factor: it is skipped as 0 where
/// the read is out of bounds, which differs from the full loop (0 * inf =
/// NaN) only when another factor is infinite or NaN there; products with a
/// division, pow, log or sqrt are left alone. (AD makes the same assumption
/// when it leaves out a guard that a guarded factor implies, ad/gather.cpp.)
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "lower/index_expr.h"

namespace tenet::lower {

/// r >= ceil(numerator / divisor) (a lower bound) or r <= floor(numerator /
/// divisor) (an upper bound); divisor > 0.
struct LoopBound {
  ir::Affine numerator;
  int64_t divisor = 1;
};

/// The bounds a reduce index's loop gets on top of its own range.
struct ReduceRange {
  std::vector<LoopBound> lower, upper;
  /// Data-dependent bounds (a where clause read from a tensor, `k in
  /// start(b):end(b)`): r >= first, r < end, int64 expressions of outer indices.
  std::vector<ir::Expr> first, end;
  bool narrowed() const {
    return !lower.empty() || !upper.empty() || !first.empty() || !end.empty();
  }
};

struct GuardBounds {
  ir::Expr body;                    // the body without the conditions the bounds enforce
  std::vector<ReduceRange> reduce;  // per reduce dim of the Compute
};

/// The bounds of `c`'s reduce loops. `loop_order`: its out and reduce indices,
/// outermost loop first; `ranges`: the range of every index its body may use
/// (its own and enclosing ones; names are not used). Without a reduction or a
/// usable condition, the body is `c.body` and no range is narrowed.
GuardBounds infer_guard_bounds(const ir::Compute& c, const std::vector<std::string>& loop_order,
                               const IndexRanges& ranges);

/// The first and the end (exclusive) value of reduce dim `d`'s loop under
/// `range`: its own bound and the narrowing ones, leaving out those the
/// others provably imply over `ranges` (max(0, ceildiv(h - 1, 2))).
IndexExpr loop_start(const ir::Dim& d, const ReduceRange& range, const IndexRanges& ranges);
IndexExpr loop_end(const ir::Dim& d, const ReduceRange& range, const IndexRanges& ranges);

/// The most iterations `range` allows when a lower and an upper bound differ
/// by a constant (a window: h - 1 <= 2*y <= h allows one), else nullopt.
std::optional<int64_t> window_trip_count(const ReduceRange& range);

/// The one value of reduce dim `d` when `range` always allows exactly one,
/// inside `d`'s own range: a window as wide as its stride (the gradient of a
/// 2x2 max pool with stride 2: h - 1 <= 2*y <= h gives y = h / 2), so the
/// loop becomes a local. nullopt otherwise (other bounds, data-dependent
/// ones, or a window that may hold no value or leave `d`'s range).
std::optional<IndexExpr> single_iteration(const ir::Dim& d, const ReduceRange& range,
                                          const IndexRanges& ranges);

}  // namespace tenet::lower
