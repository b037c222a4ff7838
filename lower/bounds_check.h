/// \file
/// The run-time half of the JIT's input checking: reads that are not guarded
/// must stay inside their tensors for the sizes of this call.
///
/// For every backend and the JIT (lower/README.md). Expects: a verified function and its bound
/// sizes (ir::bind_sizes). Guarantees: throws BindError, naming the read, the statement and the
/// size values, when an unguarded read outside the branches of a select would leave its tensor
/// somewhere in its domain; the interpreter reports the same reads, so generated code, which does
/// not check them, never runs with an out-of-bounds read.
#pragma once

#include "ir/ir.h"

namespace tenet::lower {

void check_reads_in_bounds(const ir::Function& fn, const ir::SizeBindings& sizes);

}  // namespace tenet::lower
