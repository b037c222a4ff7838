/// \file
/// `hoist`: moves selects whose condition depends only on out indices out of
/// sum reductions, so the reduction underneath is a plain contraction.
///
/// For a statement `R(out) +=! body` (without an init) whose body, after
/// distributing products over such selects (`a * select(c, x, y)` to
/// `select(c, a * x, a * y)`, only when neither branch is a zero constant,
/// since `0 * inf` is NaN), is a tree of selects with conditions free of
/// reduce indices and of tensor reads, each non-zero leaf `e` becomes its own
/// statement
///
///     R_sum(out') +=! e            (R_sum_1, ... for further leaves)
///
/// and R becomes the element-wise select tree over those sums, with zero
/// leaves reading 0. This is exact: sum(select(c, e, 0)) is select(c, sum(e),
/// 0) when c does not vary in the sum. Each R_sum is computed only where the
/// conditions on its leaf's path hold: they must bound out indices (`j < S`,
/// `j >= S`, `i + S < J`, `y == 2`, conjunctions of these), and R_sum covers
/// [0, max(0, min(uppers) - L)) with the index shifted by the largest lower
/// bound L. So the halves of a concatenation cost what they did together and
/// no sum does work the original skipped. Inside every new statement,
/// comparisons decided by the index ranges fold and guarded reads that
/// provably stay in bounds become plain reads (index_facts.h).
///
/// Expects: a verified function. Guarantees: a verified function whose
/// outputs are bitwise the same (the sums add the same terms in the same
/// order). A statement is left alone when a path's conditions are not such
/// bounds, or a new sum would evaluate an unguarded read that may be out of
/// bounds, or an integer division.
#pragma once

#include "ir/ir.h"

namespace tenet::passes {

void hoist(ir::Function& fn);

}  // namespace tenet::passes
