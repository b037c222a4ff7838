/// \file
/// The scatter form of a sum (IR analysis; lower/scatter.h runs such sums as
/// scatters, and the interpreter keeps their accumulation in the result's
/// type, as that code does: ir/interp.cpp).
///
/// The gradient of a read through a computed index, R(I(b, l), d), is a sum
/// that masks each contribution with the equality the read's index makes
/// (ad/gather.h):
///
///     d_R(v, d) +=! select(v == I(b, l) && rest, value, 0)      (sum over b, l)
///
/// Recognised: a Sum with reduce indices whose body is select(cond, value, 0)
/// where a conjunct of cond is `y == E` for an out index y and an int64 E
/// that reads a tensor and mentions no scattered out index. The out indices
/// a target mentions (d_x(i, j, y) with y == 2*k + arg(i, j, k)) are `outer`:
/// they loop outside the contributions, which then scatter into their own
/// slice of the result.
#pragma once

#include <optional>
#include <vector>

#include "ir/ir.h"

namespace tenet::ir {

/// An out dimension whose index a contribution computes.
struct ScatterTarget {
  size_t dim = 0;  // of the result
  Expr index;      // its value (int64) at a contribution: reads no out index
};

/// The scatter form of a statement.
struct IndexScatter {
  std::vector<ScatterTarget> targets;  // in the result's dimension order
  std::vector<size_t> outer;           // out dimensions a target mentions, in order
  std::vector<size_t> free;            // the other out dimensions, in order
  Expr condition;                      // the rest of the mask; null when none
  Expr value;                          // one contribution (may read the scattered indices)
};

/// The scatter form of `c`, or nullopt when it has none (also when a target
/// mentions a scattered out index: `v == I(v)` is no target).
std::optional<IndexScatter> index_scatter(const Compute& c);

/// Whether a float32 sum accumulates in float64 (rounded once, when the
/// statement is done), in the interpreter and in compiled loops alike: every
/// float32 Sum over reduce indices except one of scatter form, which compiled
/// code adds into the result element by element (lower/scatter.h). A sum with
/// no reduce index (one step, `y = init + x`) rounds as float32 addition.
/// Products handed to the GEMM library accumulate as the library does.
bool accumulates_in_double(const Compute& c);

/// Whether `body` compares `index` itself (as a value, outside every read):
/// a test that may narrow the index's loop (lower/loop_bounds.h). A
/// comparison of data read at the index (`x(i) > 0`) is no such test.
bool tests_index(const Expr& body, const std::string& index);

/// Whether `c` may run in vector lanes (Annotations::lanes): a max or min
/// reduction (not of bools), or a float32 sum that accumulates in double
/// with no test (tests_index) or guarded read on its last reduce index (which
/// would narrow that loop in compiled code, where the lanes count from its start).
bool may_run_in_lanes(const Compute& c);

}  // namespace tenet::ir
