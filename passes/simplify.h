/// \file
/// `simplify`: constant folding and algebraic identities inside expressions.
///
/// Expects: a verified function. Guarantees: a verified function whose every
/// output is bitwise identical to before, under the interpreter's semantics in
/// both float32 and float64 mode (InterpOptions::float_type) and in generated
/// code. So it only rewrites what IEEE arithmetic makes exact:
///   - operations on constants that are correctly rounded (add sub mul div
///     sqrt neg abs max min, comparisons, logic, casts) and give the same
///     value whether computed in float32 or in float64 — `1 + 2` folds,
///     `0.1 + 0.2` does not; exp/log/tanh/sigmoid/pow never fold;
///   - x*1, 1*x, x/1, x + -0.0, x - 0.0 (and x + 0, x - 0, x*0 for integers;
///     x + 0.0 is not x when x is -0.0), x * -1 to neg(x), neg(neg(x)),
///     not(not(x)), and/or with a constant, select with a constant condition
///     or equal branches, select(not(c), a, b) to select(c, b, a), and
///     size(...) of a constant size.
/// A rewrite never drops a subexpression that could fail at run time (an
/// integer division, an unguarded read), except the untaken side of a select,
/// which is never evaluated anyway.
#pragma once

#include "ir/ir.h"

namespace tenet::passes {

void simplify(ir::Function& fn);

/// The simplified form of one expression (exposed for tests).
ir::Expr simplify_expr(const ir::Expr& e);

}  // namespace tenet::passes
