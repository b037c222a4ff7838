/// \file
/// The values a computed index can take, for proofs that make its run-time
/// check needless (`x(i % 4)` with x of 4 elements, a uint8 index into a
/// table of 256). Internal to codegen/.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "codegen/cpp_expr.h"
#include "ir/ir.h"

namespace tenet::codegen::detail {

/// [lo, hi], each side known or not.
struct Interval {
  std::optional<int64_t> lo, hi;
};

/// What `e` (int64) can be over the index ranges of `indices`: constants;
/// indices (their range's constant sides); reads of bool, int8, uint8 and
/// int16 tensors (their type's range); casts between integers; +, -, * of
/// bounded sides; and % or / by a positive constant of a non-negative value.
Interval value_range(const ir::Expr& e, const std::map<std::string, IndexInfo>& indices);

/// Whether every value of `index` lies in [0, extent).
bool provably_in_extent(const ir::Expr& index, const ir::SizeExpr& extent,
                        const std::map<std::string, IndexInfo>& indices);

}  // namespace tenet::codegen::detail
