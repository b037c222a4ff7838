/// \file
/// The reverse walk (internal to ad/): backward statements for an unrolled
/// forward program.
///
/// Expects: `fwd` emitted into `fb` (unroll.h). Walks the statements last to
/// first; for `T(out) op= body`, with T's complete adjoint dT in hand (every
/// statement that reads T comes later, so has been walked), the rules of
/// rules.h give each read's adjoint and gather.h turns it into one Compute
/// over the read tensor's domain. Several contributions to one tensor chain
/// through Compute init (a Sum starting from the previous partial); a single
/// one is a plain statement. Only tensors that depend on a `wrt` input and
/// reach a seeded output get an adjoint.
///
/// Max/min reductions route the adjoint to one element: an int64 statement
/// `<T>_argmax(out) min=! select(body == T(out), position, count)` finds the
/// first maximum in domain order (row-major over the reduce indices), and only
/// that element's read receives dT. With an init, the init wins ties.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ad/unroll.h"
#include "ir/builder.h"

namespace tenet::ad {

struct Seed {
  ir::ValuePtr output;
  ir::ValuePtr cotangent;  // null: the output is a scalar seeded with 1
};

/// Emits the backward statements into `fb`; returns one gradient per `wrt`
/// value, named d_<name>, with explicit zeros for inputs that reach no seed.
/// `taken_names` are names new index names avoid.
std::vector<ir::ValuePtr> emit_backward(ir::FunctionBuilder& fb, const ForwardCopy& fwd,
                                        const std::vector<ir::ValuePtr>& wrt,
                                        const std::vector<Seed>& seeds,
                                        const std::set<std::string>& taken_names);

}  // namespace tenet::ad
