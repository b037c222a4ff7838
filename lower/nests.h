/// \file
/// The loop nests of a block as every backend runs them: its live statements
/// in order, consecutive Computes that share loops (lower/schedule.h's
/// `shared`, from the `schedule` pass) in one nest. The memory planner reads
/// them (row-local temporaries, memory_plan.h) and backends print them.
///
/// Expects: find_liveness, lower_gemms and lower_scatters have run, and the
/// memory plan's views are known (MemoryPlan::views). Guarantees: every live
/// statement of the block in exactly one nest, in order; a member's
/// `shared` is 0 for a nest's first member and at most its schedule's outer
/// loops otherwise. A dead statement between two members (liveness can be
/// finer than dce's) keeps them in one nest only as far as every statement
/// from the first to the second shares loops.
#pragma once

#include <cstddef>
#include <vector>

#include "ir/ir.h"

namespace tenet::lower {

struct LoweredFunction;  // lowered_function.h

struct NestMember {
  const ir::Stmt* stmt;
  size_t shared;  // leading loops shared with the previous member (0: the nest's first)
};

/// Whether `s` runs as loops a nest can share: a Compute that is neither a
/// GEMM, a library convolution, a scatter nor a view.
bool runs_as_loops(const ir::Stmt& s, const LoweredFunction& lowered);

/// The live statements of `body` grouped into nests (a Loop statement or a
/// statement that does not run as loops is a nest of its own).
std::vector<std::vector<NestMember>> nests_of(const std::vector<ir::Stmt>& body,
                                              const LoweredFunction& lowered);

}  // namespace tenet::lower
