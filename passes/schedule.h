/// \file
/// `schedule`: chooses how each statement's loops run, as annotations
/// (ir/annotations.h) the code generator follows (lower/schedule.h). Two decisions:
///
/// 1. Loop order (Annotations::inner_loops, printed `order`). A reduction runs its out indices
/// outside and its
///    reduce indices inside, one accumulator per out element. When the
///    innermost reduce index is strided in some read (s(b, k, e) +=!
///    c(b, t, y, x, k) * uh(b, t, y, x, k, e) reduces over x with stride K*E)
///    and the innermost out indices are contiguous in the result and in every
///    read that mentions them, those out indices move inside the reduce loops:
///
///        order = [b, t, y, x, k, e]      (outer out | reduce | inner out)
///
///    The inner block is initialised (from its init or the identity), then
///    accumulated (a float32 sum in a block of doubles on the stack, rounded
///    into the result at the end: ir/scatter_form.h): each element still sums
///    its terms in the same order (reduce indices ascending) and is written by
///    one thread, so results are bitwise those of the default order, and the
///    inner loops are contiguous and vectorise. The inner block grows from the
///    innermost out index outwards while it stays contiguous in every access
///    and holds at most kMaxInnerBlock elements (symbolic extents count as 1:
///    sizes such as B are batch dimensions, outermost; for a float32 sum only
///    the block's outermost index may be symbolic, and codegen tiles it); at
///    least one out index stays outside (the parallel loop), except when there
///    is only one: a column sum (a bias gradient) runs on one thread, which
///    beats reading with a stride on two (layer norm's backward: 9.6 -> 3.8 ms).
///    A statement lowered to GEMM only above a size decided per call gets an
///    order too, for its loops below that size.
///
/// 2. Shared loops (Annotations::nest, printed `nest`). Consecutive statements of a block whose
/// leading
///    out loops have the same extents run in one loop nest over them:
///
///        nest = [b, t, y, x]     (this statement's first out indices, shared
///                                 with the previous statement's)
///
///    so softmax's max, exp, sum and divide over (b, t, y, x) run with k
///    inner, and the routing step's statements share the loop over b. Legal
///    when every read of an earlier statement of the nest uses, at each shared
///    position, exactly the shared index (so it reads only what the current
///    iteration has already computed); the depth is lowered until it is. The
///    outer loops of a statement with an `order` are only its outer out
///    indices. Statements lowered to GEMM, loops and scalars are never part
///    of a nest. A loop with a window's border (passes/window_border.h: a
///    padded max-pool's rows and columns, whose tests hold on most of their
///    range) is not shared, nor any loop inside it, so that codegen can run
///    its interior without the tests (lower/peel.h).
///
/// 3. Unroll-and-jam (Annotations::jam, printed `jam`). A reduction left in
///    the default order adds its terms into one accumulator per element: a
///    chain of dependent additions (4 cycles each) or, for max and min,
///    longer still. When the last out index has a constant extent and each
///    element sums at least kMinJamTerms terms, that loop steps by a tile of
///    kJamTile (or the largest power of two from kMinJamTile dividing the extent),
///    and the tile's accumulators run interleaved inside the reduce loops:
///
///        for j0 in 0:J by 8 { acc[8] = init; for r { for jj in 0:8 { acc[jj] += x(j0 + jj, r) } }
///        }
///
///    Each element still sums its terms in order, into its own accumulator,
///    so the bits are the default order's; the tile's independent chains
///    fill the adder (batch norm's statistics over 131072 terms, softmax's
///    max over a row). The jammed loop is shared only within a run of
///    consecutive jammed statements with the same tile, out extents and
///    reduce ranges, none reading another's result (or init): their `nest`
///    then covers every out loop, and codegen runs their tiles in one pass
///    of the reduce loops (batch norm's backward sums dy, dy * x-hat, ...
///    reading dy and x once), unless a guard narrows some member's reduce
///    loops (then each runs its own pass). Not for a comparison of indices
///    with the last out index (a window's border would stay inside the
///    reduce loops instead of narrowing them), nor scatters.
///
/// 4. Vector lanes (Annotations::lanes, printed `lanes`). A max or min
///    reduction, or a float32 sum (which accumulates in double), in the
///    default order whose last reduce index has stride 1
///    in every read that mentions it (no guard, no computed index, no
///    comparison of indices with it; a comparison of data read at it, a
///    ReLU mask, is a select per term) and runs over at least kMinLaneTerms
///    terms (or, for max and min, a symbolic number) steps that loop by kLanes terms into as
///    many partial accumulators, combined pairwise at the end. A shorter
///    row of constant length steps by the most lanes (16, 8 or 4) that
///    divide it, when its outer reduce loops make kMinLaneTerms * kLanes
///    terms in all: the lanes run on from row to row (batch norm's sums over
///    a 16x16 or 8x8 image, for each channel, over the batch).
///
///        lane[16] = identity; for r0 in 0:R' by 16 { for l in 0:16 { lane[l] = max(lane[l], x(r0 +
///        l)) } } acc = max(init, the remaining terms..., tree of lane[])
///
///    Float max and min are maximumNumber and minimumNumber
///    (runtime/tenet_runtime.h), commutative and associative to the bit on
///    what a reduction holds, so the result is the default order's bits; the
///    lanes are contiguous loads, one vector chain (softmax's row max: 42% of
///    its forward time with rows jammed, read with a stride). A float32 sum's
///    lanes are doubles, folded in a fixed order (tenet::sum_lanes: lane k +
///    8 onto k, then k + 4, k + 2, k + 1). That is another order of its
///    float64 additions, which the language defines by this annotation
///    (docs/language.md, "float32 sums accumulate in float64"): the
///    interpreter adds the same terms into the same lanes and folds them
///    alike, so it stays the oracle bit for bit. Against the same sum
///    without lanes the float32 result differs only where the two float64
///    sums round differently and that difference crosses a float32
///    rounding boundary (layer norm's forward: 0.38 -> 0.21 ms, the same
///    bits on the benchmark's input). Lanes are chosen before a jam.
///
/// Expects: a verified function, after `contraction` and `fuse`. Guarantees:
/// the IR is unchanged except for Annotations::inner_loops, ::nest, ::jam and ::lanes (reset,
/// then set, on Compute statements), which the interpreter follows (a sum's
/// lanes) or need not (the rest), so it stays the oracle.
/// Memory planning must treat the statements of one nest as one statement
/// (a value read anywhere in the nest lives until its end).
#pragma once

#include <cstdint>

#include "ir/ir.h"

namespace tenet::passes {

/// The largest block of out elements (product of constant extents) a
/// reduction accumulates in place: 16 KiB of floats stays in L1.
constexpr int64_t kMaxInnerBlock = 4096;

/// Accumulators jammed together: enough independent chains to keep two
/// adders busy through a 4-cycle latency.
constexpr int64_t kJamTile = 8;
/// The smallest tile worth jamming (2 chains would barely pay for the tile).
constexpr int64_t kMinJamTile = 4;
/// The fewest terms per element for which jamming pays (symbolic extents
/// count as this many).
constexpr int64_t kMinJamTerms = 16;

/// Partial accumulators of a max or min reduction in lanes: one AVX-512
/// vector of floats (two of AVX2).
constexpr int64_t kLanes = 16;
/// The fewest terms per element worth lanes (symbolic extents count as enough).
constexpr int64_t kMinLaneTerms = 2 * kLanes;
/// The fewest lanes of a row shorter than kMinLaneTerms (a power of two that
/// divides it), which needs kMinLaneTerms * kLanes terms in all.
constexpr int64_t kMinShortRowLanes = 4;

void schedule(ir::Function& fn);

}  // namespace tenet::passes
