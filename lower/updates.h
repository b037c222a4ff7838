/// \file
/// Outputs that update an input in place (ir::Function::updated_input: TC's
/// accumulation into an output the caller supplies, `y(i) += x(i)`).
///
/// The C ABI passes such an output and its initial value as one buffer
/// (codegen/cpp.h), so generated code reads the initial value from the
/// buffer it writes the result into. That is right when every read of the
/// initial value comes before the buffer is written: in statements before
/// the one that defines the output, or in that statement itself at the very
/// element it writes (as its `init`, or as an element-wise statement's read
/// at its own out indices). Before the other stages run, `separate_updates`
/// makes every function so: where some read would come later (the backward
/// of `y(i) max= x(i, k)` reads the initial y after y is written; `y(i) =
/// y(N - 1 - i)` reads another element), a new first statement copies the
/// initial value, `%y.initial = %y`, and those reads read the copy.
#pragma once

#include "ir/ir.h"

namespace tenet::lower {

/// Rewrites `fn` as above; a function without updated inputs is unchanged.
void separate_updates(ir::Function& fn);

/// Whether `result` is an output that updates `initial` in place: the two
/// share one buffer.
bool shares_buffer(const ir::Function& fn, const ir::Value& initial, const ir::Value& result);

/// Whether every read of the updated input `initial` in `fn` comes before
/// `output` is written (see above): what codegen relies on.
bool reads_precede_update(const ir::Function& fn, const ir::Value& initial,
                          const ir::Value& output);

}  // namespace tenet::lower
