/// \file
/// `dce`: dead-code elimination. Removes every statement whose result no
/// output needs, directly or through other statements.
///
/// Expects: a verified function. Guarantees: a verified function with the same
/// inputs, outputs and output values, in which
///   - every Compute result is an output or is read (or used as an init, a
///     loop init or a loop next) by a statement that stays;
///   - a loop keeps a carried tensor only if its result is used after the loop
///     or its parameter is read by a statement that stays in the body; a
///     live-out only if its result is used; a loop left with nothing to carry
///     or hand out is removed entirely (loops have no side effects).
/// Statements are never reordered, and inputs are never removed (they are the
/// function's signature).
#pragma once

#include "ir/ir.h"

namespace tenet::passes {

void dce(ir::Function& fn);

}  // namespace tenet::passes
