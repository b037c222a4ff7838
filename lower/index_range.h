/// \file
/// The values a computed index can take, for proofs that make its run-time
/// check needless (`x(i % 4)` with x of 4 elements, a uint8 index into a
/// table of 256). For every backend (lower/README.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "ir/ir.h"
#include "lower/index_expr.h"

namespace tenet::lower {

/// [lo, hi], each side known or not.
struct Interval {
  std::optional<int64_t> lo, hi;
};

/// What `e` (int64) can be over the index ranges of `indices`: constants;
/// indices (their range's constant sides); reads of bool, int8, uint8 and
/// int16 tensors (their type's range); casts between integers; +, -, * of
/// bounded sides; and % or / by a positive constant of a non-negative value.
Interval value_range(const ir::Expr& e, const IndexRanges& indices);

/// Whether every value of `index` lies in [0, extent).
bool provably_in_extent(const ir::Expr& index, const ir::SizeExpr& extent,
                        const IndexRanges& indices);

/// Whether `e` reads through a computed index that generated code checks at
/// run time, when `check` is on (a backend may still prove some checks needless).
bool has_checked_index(const ir::Expr& e, bool check);

}  // namespace tenet::lower
