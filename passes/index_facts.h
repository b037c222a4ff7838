/// \file
/// What is known about integer indices at a point of a statement, and the
/// rewrites that knowledge justifies (shared by the `hoist` and `index_split`
/// passes).
///
/// IndexFacts holds, per index, lower bounds (index >= L) and upper bounds
/// (index < U) as size expressions: from the ranges of the statement's
/// domain, enclosing loop variables, and conditions known to hold (the
/// condition of a select inside its then-branch). Keeping several bounds
/// instead of one min/max lets `j < min(S, J)` prove both `j < S` and
/// `j < J`. Size parameters are non-negative (bind.cpp rejects negative
/// ones), which proofs use: `i + S >= 0` holds for i >= 0.
///
/// refine() rewrites an expression under facts: comparisons they decide
/// become constants, a select whose condition is decided becomes its branch,
/// and a guarded read whose every index provably stays inside the tensor
/// becomes a plain read. It never changes a value the expression computes
/// where the facts hold.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tenet::passes::detail {

/// True only when e >= 0 for every non-negative binding of its symbols
/// (a constant, or a linear form with non-negative coefficients).
bool provably_nonneg(const ir::SizeExpr& e);
/// True only when a <= b provably (b - a provably non-negative).
bool known_le(const ir::SizeExpr& a, const ir::SizeExpr& b);
/// min and max that pick an argument when the order is provable.
ir::SizeExpr size_min(const ir::SizeExpr& a, const ir::SizeExpr& b);
ir::SizeExpr size_max(const ir::SizeExpr& a, const ir::SizeExpr& b);

/// A comparison of two affine int64 expressions (ir/affine.h), as `lhs < 0`
/// (lt, le, gt and ge normalise to this; eq and ne do not).
std::optional<ir::Affine> as_negative_test(const ir::Expr& cond);

struct Bounds {
  std::vector<ir::SizeExpr> lower;  // index >= each
  std::vector<ir::SizeExpr> upper;  // index < each
};

class IndexFacts {
 public:
  void add_range(const std::string& index, const ir::SizeExpr& lo, const ir::SizeExpr& hi);
  void add_lower(const std::string& index, const ir::SizeExpr& lo);
  void add_upper(const std::string& index, const ir::SizeExpr& hi);
  /// Records what `cond` (a conjunction of one-index bounds and equalities)
  /// implies; parts of other forms add nothing.
  void assume(const ir::Expr& cond);
  /// Records what `cond` being false implies.
  void assume_not(const ir::Expr& cond);

  /// The value of a boolean expression of index comparisons when the facts
  /// decide it.
  std::optional<bool> decide(const ir::Expr& cond) const;
  /// Whether `a` provably lies in [0, extent).
  bool in_bounds(const ir::Affine& a, const ir::SizeExpr& extent) const;
  /// Whether `l < 0` provably holds.
  bool proves_negative(const ir::Affine& l) const;

  const Bounds* bounds(const std::string& index) const;

 private:
  /// Lower (or upper) bounds of a linear form, one per choice of bounds of its indices.
  std::vector<ir::SizeExpr> extremes(const ir::Affine& l, bool lowest) const;

  std::map<std::string, Bounds> bounds_;
};

/// `e` with decided comparisons and selects folded and provably in-bounds
/// guarded reads made plain, under `facts` (extended inside select branches).
ir::Expr refine(const ir::Expr& e, const IndexFacts& facts);

/// Whether evaluating `e` anywhere the facts hold cannot fail: every
/// unguarded read is provably in bounds and there is no integer division.
bool safe_to_evaluate(const ir::Expr& e, const IndexFacts& facts);

/// Whether `e` mentions any of `indices` (as an Index or in a read's index).
bool mentions_any(const ir::Expr& e, const std::vector<ir::Dim>& indices);

/// Whether `e` reads a tensor.
bool reads_tensor(const ir::Expr& e);

/// `e` with `index` replaced by `index + shift` everywhere.
ir::Expr shift_index(const ir::Expr& e, const std::string& index, const ir::SizeExpr& shift);

/// Rewrites the statements of `body` and of the loops inside it, in order:
/// `rewrite(s, facts, out)` appends what replaces the statement `s` (itself,
/// moved, to keep it) to `out`, with `facts` knowing the enclosing loops'
/// variables' ranges (and what `outer` knows).
void rewrite_statements(std::vector<ir::Stmt>& body, const IndexFacts& outer,
                        const std::function<void(ir::Stmt& s, const IndexFacts& facts,
                                                 std::vector<ir::Stmt>& out)>& rewrite);

/// Makes Values with ids and names not used in a function yet.
class FreshValues {
 public:
  explicit FreshValues(const ir::Function& fn);
  /// A new value named `base` (or `base_1`, `base_2`, ... if taken).
  ir::ValuePtr make(const std::string& base, ElemType type, std::vector<ir::SizeExpr> shape,
                    const Span& span);

 private:
  int next_id_ = 0;
  std::map<std::string, int> taken_;
};

}  // namespace tenet::passes::detail
