/// \file
/// Reverse mode inside one statement body (internal to ad/): applies the rules
/// of rules.h from the body's root down to its reads.
///
/// Reads are grouped by tensor and index list (a guarded and an unguarded read
/// at the same indices are one group); a group's adjoint is the sum of the
/// adjoints reaching each of its reads. Both functions visit the body in the
/// same order, so the groups they report correspond one to one; only reads of
/// tensors for which `wanted` holds are reported, and subexpressions without
/// such reads are not differentiated at all.
#pragma once

#include <functional>
#include <vector>

#include "ir/ir.h"

namespace tenet::ad {

using WantsGradient = std::function<bool(const ir::Value&)>;

/// The read groups of `body` through which a gradient can flow (float reads
/// reachable from the root through operands that carry gradients).
std::vector<ir::Expr> differentiable_reads(const ir::Expr& body, const WantsGradient& wanted);

struct ReadAdjoint {
  ir::Expr read;     // the group's first read
  ir::Expr adjoint;  // d(loss)/d(read) at one point of the statement's domain
};

/// The adjoint of every read group, given the adjoint `seed` of the whole body
/// and an expression `root_value` for the body's value.
std::vector<ReadAdjoint> read_adjoints(const ir::Expr& body, const ir::Expr& root_value,
                                       const ir::Expr& seed, const WantsGradient& wanted);

}  // namespace tenet::ad
