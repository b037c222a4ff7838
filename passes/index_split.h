/// \file
/// `index_split`: index-set splitting. A reduction whose body compares a
/// reduce index with a size (a concatenation `select(j < S, h?(b, j),
/// x?(b, j - S))`) becomes a chain of reductions over the sub-ranges on which
/// the comparison is constant:
///
///     R(out) +=! body    for j in lo:hi
/// becomes
///     R_part(out) +=! body[j < E := true]   for j in lo:max(lo, min(E, hi))
///     R(out) +=! init(R_part) body[j < E := false]  for j in min(hi, max(E, lo)):hi
///
/// (`<`, `<=`, `>`, `>=` with the index on either side, anywhere in the body,
/// also inside conjunctions; up to kMaxPieces pieces). The bounds are right
/// for every binding of the sizes, including E outside [lo, hi) and sizes in
/// no known order (J against S + I); min and max disappear where the order is
/// provable, and a piece whose range is provably empty is dropped. Within
/// each piece, comparisons its ranges decide fold and guarded reads that
/// provably stay in bounds become plain reads (index_facts.h), so each piece
/// is a plain contraction when the original was one behind a select.
/// The first piece starts from the original init, each later one from the
/// piece before; sum, max and min reductions alike.
///
/// Expects: a verified function (after hoist). Guarantees: a verified
/// function with the same outputs, up to the order of float additions when
/// the split index is not the first (outermost) reduce index; bitwise the
/// same when it is, since the terms are then added in the same order, except
/// for a float32 sum: it accumulates in double (ir/scatter_form.h) and each
/// piece rounds its partial sum to float32, so that every piece stays a
/// plain contraction the GEMM library can take (the LLTM's gates); those
/// agree to a few float32 ulps.
#pragma once

#include "ir/ir.h"

namespace tenet::passes {

/// At most this many statements come from one reduction.
constexpr int kMaxPieces = 4;

void index_split(ir::Function& fn);

}  // namespace tenet::passes
