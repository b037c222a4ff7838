/// \file
/// The derivative table: one rule per expression operation (internal to ad/).
///
/// A rule sees one expression node `n`, an expression `self` for the value of
/// `n` (a read of the stored result when `n` is a whole statement's body,
/// otherwise `n` itself, recomputed) and the adjoint `d` of `n`, and returns
/// the adjoint that flows to each operand. It guarantees: the result has one
/// entry per operand of `n`; an entry is null exactly where
/// carries_gradient(n, i) is false (conditions, comparisons, integer and
/// boolean operands, casts from integers); every non-null entry has the
/// operand's type.
#pragma once

#include <cstddef>
#include <vector>

#include "ir/ir.h"

namespace tenet::ad {

/// Whether operand `i` of `n` can carry a gradient: both are floats and the
/// operand is not a condition.
bool carries_gradient(const ir::Expr& n, size_t i);

/// The adjoints of `n`'s operands (see the file comment).
std::vector<ir::Expr> operand_adjoints(const ir::Expr& n, const ir::Expr& self, const ir::Expr& d);

}  // namespace tenet::ad
