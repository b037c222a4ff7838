/// \file
/// Stage `lower_loops`: the loop tree of a function (lower/loop_tree.h), built
/// from its schedule (lower/schedule.h), nests (nests.h), peels (peel.h),
/// row-local temporaries (row_local.h) and guard bounds (loop_bounds.h): the
/// one place where loops are decided. Its printer (`tenet print --stage
/// loops`, --dump-after=lower_loops).
///
/// For every backend (lower/README.md). Expects: `lowered` after plan_memory.
/// Guarantees: see loop_tree.h.
#pragma once

#include <string>

#include "lower/loop_tree.h"
#include "lower/lowered_function.h"

namespace tenet::lower {

/// Stage `lower_loops`: the loop tree of `lowered`'s function.
LoopTree lower_loops(const LoweredFunction& lowered, const LoopOptions& options);

/// The tree as text (`tenet print --stage loops`, --dump-after=lower_loops).
std::string print(const LoopTree& tree, const ir::Function& fn);

}  // namespace tenet::lower
