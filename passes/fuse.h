/// \file
/// `fuse`: inlines cheap element-wise statements into the statements that read
/// them, so that a value is recomputed where it is needed instead of being
/// written to memory and read back. In a gradient program the same rule is
/// the save-or-recompute policy between the forward and the backward half.
///
/// A producer is a Compute statement computed element by element: an
/// assignment, or a reduction over an empty domain with an init (`init + body`,
/// AD's accumulation of adjoints; also without init for floats: `0 + body`).
/// It is inlined into every statement that uses it, or into none:
///   - never when it is a reshape (ir/reshape.h: a view, not a computation)
///     or is read by one (whose body must stay one read), is an output, is carried or handed out by
///     a loop, is read inside a nested loop (it would be recomputed per iteration) or through a
///     guard, is the init of a reduction over a non-empty domain, is read by a
///     statement lowered to GEMM (its body must stay `A * B`), or is read by a
///     max/min reduction while its body multiplies (AD's argmax re-evaluates
///     the body and compares it with the stored maximum: an FMA contracted in
///     one place only would break the tie);
///   - the cost rule: cost(body) counts operation units (a read or a cheap
///     arithmetic operation 1, div and sqrt 4, exp log tanh sigmoid pow 16).
///     Each read of the producer has a fan-in, the number of its reader's
///     domain points per producer element: the product of the extents of the
///     reader's indices the read's index does not determine (it must be a
///     constant). With E the sum of fan-ins over all reads, the producer is
///     inlined when E = 1 (no extra work: only the write and the read are
///     saved) and cost <= kMaxInlinedCost, or when
///     (E - 1) * cost <= kRecomputeBudget: a float written to and read back
///     from memory costs about as much as 16 vectorised cheap operations.
/// Producers are considered in statement order, each against the IR as the
/// previous decisions left it (an inlined producer makes its readers dearer).
///
/// Expects: a verified function; after `contraction` (a statement it lowered
/// is never changed). Guarantees: a verified function whose every output is
/// bitwise identical under the interpreter (the same operations on the same
/// values; generated code may differ by the rounding of FMA contraction across
/// the former statement boundary). Annotations (ir/annotations.h): a reader
/// into which producers were inlined lists them in `inlined` (the values,
/// including those inlined into the inlined ones). In a gradient program (one
/// with statements of AdOrigin::Backward), every forward statement the
/// backward half reads gets `saved`, why it is kept ("contraction",
/// "reduction", or why the rule kept it), and a backward statement into which
/// forward values were inlined lists them in `recomputed`, with the number of
/// reads each replaced (those values are then not repeated in `inlined`).
#pragma once

#include <cstdint>

#include "ir/ir.h"

namespace tenet::passes {

/// The most work (operation units per producer element) recomputation may add.
constexpr int64_t kRecomputeBudget = 16;
/// The largest body inlined at all (keeps expressions and generated code readable).
constexpr int64_t kMaxInlinedCost = 48;

/// Operation units of one evaluation of `e` (see above).
int64_t expression_cost(const ir::Expr& e);

void fuse(ir::Function& fn);

}  // namespace tenet::passes
