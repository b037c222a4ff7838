/// \file
/// What passes record on a statement for later passes and code generators:
/// typed fields, one group per pass that sets them. The interpreter ignores
/// them (it stays the oracle); the printer prints them and the parser reads
/// them back (docs/ir.md, "Annotations").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tenet::ir {

struct GemmPlan;  // ir/gemm_plan.h
struct ConvPlan;  // ir/conv_plan.h

/// Why reverse-mode AD made a statement (ad/).
enum class AdOrigin {
  None,      // a statement of the program itself
  Unrolled,  // a copy of a forward statement for one iteration of an unrolled loop
  Backward,  // part of the backward half: an adjoint, a gather, a seed...
};

/// A value of the forward half that the `fuse` pass inlined into a backward
/// statement, so the backward half recomputes it instead of reading it.
struct Recomputed {
  std::string value;  // its name, "short"
  int64_t uses = 0;   // the reads of it replaced by its expression
};

struct Annotations {
  // ---- the checker (lang/) and AD ----
  /// The statement is a reshape (ir/reshape.h): its body is the reshape read
  /// of one tensor, in bounds by construction; AD differentiates it as a
  /// reshape, `fuse` keeps it.
  bool reshape = false;

  // ---- AD (ad/reverse.cpp, ad/unroll.cpp) ----
  AdOrigin ad = AdOrigin::None;
  /// For comments: "gather for x(i + j)" (Backward), "it=2" (Unrolled).
  std::string ad_detail;

  // ---- `contraction` (passes/contraction.h) ----
  /// Set when the statement is computed by the GEMM library; immutable and
  /// shared like values and expressions.
  std::shared_ptr<const GemmPlan> gemm;
  /// Set instead when the statement is a 2-D convolution (or one of its
  /// gradients) computed by the convolution library (runtime/tenet_conv.h).
  std::shared_ptr<const ConvPlan> conv;

  // ---- `fuse` (passes/fuse.h) ----
  /// The names of the values inlined into this statement, in the order inlined.
  std::vector<std::string> inlined;
  /// Forward values inlined into this backward statement (recomputed there).
  std::vector<Recomputed> recomputed;
  /// A forward statement the backward half reads: why its value is kept in
  /// memory (saved) rather than inlined ("reduction", "contraction", "cost 30
  /// is too large to inline"); empty otherwise.
  std::string saved;

  // ---- `schedule` (passes/schedule.h) ----
  /// The trailing out loops run inside the reduce loops (accumulating in
  /// place); 0: every out loop outside them.
  size_t inner_loops = 0;
  /// The leading out loops shared with the previous statement of the block
  /// (one loop nest); 0: a loop nest of its own.
  size_t nest = 0;
  /// Unroll-and-jam: the last out loop steps by this tile, and the tile's
  /// accumulators (one per element, each summing its terms in order) run
  /// interleaved inside the reduce loops; 0: one accumulator at a time.
  int64_t jam = 0;
  /// Vector lanes of a max or min reduction, or of a float32 sum: its last
  /// reduce loop steps by this many terms, each lane a partial max (or a
  /// partial sum in double) of its own, the lanes combined at the end. Max
  /// and min give the same bits in any order (tenet::math::max); a sum's
  /// lanes are part of its meaning, which the interpreter follows too (the
  /// order of docs/language.md, "float32 sums accumulate in float64"); 0: one
  /// accumulator.
  int64_t lanes = 0;
  /// A scan (lower/loops_scan.cpp): out index `scan - 1`, whose loop moves one
  /// bound of the one reduce index, runs innermost of the out loops, serially
  /// and in its own order, each element adding to the one before it the
  /// terms it gains (cumsum in O(N)); 0: none.
  size_t scan = 0;

  bool is_backward() const { return ad == AdOrigin::Backward; }
};

struct Stmt;

/// The annotations of `s` as "key: value" lines, for comments (lang/unparse):
///   "ad: gather for x(i + j)", "gemm: for b: c[i | j] = a[i | k] * b[k | j]",
///   "conv: forward: y[B, 64, 32, 32] = conv(x[...], w[...], stride 1x1, pad 1x1)",
///   "inlined: %e, %f", "recomputed: %short (4 uses)", "saved: reduction",
///   "order: b, k, t", "nest: b", "jam: k by 8", "scan: i". (A reshape is printed as one: no line.)
std::vector<std::string> describe_annotations(const Stmt& s);

}  // namespace tenet::ir
