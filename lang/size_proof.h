/// \file
/// Proofs about sizes for the checker: does an inequality between size
/// expressions hold for every value of the size parameters that satisfies
/// some facts (e.g. "every range of this statement is non-empty")? Used by
/// range inference (ranges.h) to report the reads that are out of bounds for
/// all sizes.
///
/// Expects: size expressions (ir::SizeExpr) over size parameters, which are
/// integers >= 0. Guarantees: soundness, not completeness: proves() is true
/// only when the inequality follows from the facts, the parameters being
/// >= 0, and what min, max and floor division mean (Fourier-Motzkin
/// elimination over the rationals, with integer rounding); false when it
/// cannot tell, including when the work would grow too large.
#pragma once

#include <optional>
#include <vector>

#include "ir/size_expr.h"

namespace tenet::lang::detail {

class SizeFacts {
 public:
  /// Assumes e >= 0.
  void assume_nonnegative(const ir::SizeExpr& e) {
    facts_.push_back(e);
    consistent_.reset();
  }
  /// True when e >= 0 follows (see the file comment).
  bool proves_nonnegative(const ir::SizeExpr& e) const;
  /// True when a <= b follows.
  bool proves_le(const ir::SizeExpr& a, const ir::SizeExpr& b) const {
    return proves_nonnegative(b - a);
  }

 private:
  std::vector<ir::SizeExpr> facts_;
  /// Whether the facts can hold together (computed once, on first use).
  mutable std::optional<bool> consistent_;
};

}  // namespace tenet::lang::detail
