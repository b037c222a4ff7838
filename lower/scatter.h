/// \file
/// The scatter decision (stage lower_scatter): whether a sum runs over its
/// contributions instead of over its result's elements.
///
/// The gradient of a read through a computed index, R(I(b, l), d), is a sum
/// that masks each contribution with the equality the read's index makes
/// (ad/gather.h):
///
///     d_R(v, d) +=! select(v == I(b, l) && rest, value, 0)      (sum over b, l)
///
/// As a loop nest that costs |R| times the contributions. Each contribution
/// has exactly one target element, so this runs it as a scatter: d_R = init
/// (or 0), then for the reduce indices in order, v = I(b, l) (skipped when
/// outside [0, V), where the mask never holds), and for every free out index
/// (d) where `rest` holds, d_R(v, d) += value. Every element receives its
/// terms in the order of the reduce indices, exactly as the sum adds them,
/// so the result is the loop nest's bit for bit, whatever the number of
/// threads: threads split the first free out index only (blocks of columns,
/// each thread walking all contributions for its own columns); a scatter
/// with no free out index runs on one thread. Out indices a target mentions
/// (outer: a max pool's gradient, `h == 2*k + arg(b, c, k, l) / 3 % 3 - 1`)
/// loop outside the contributions instead, and threads split the first of
/// them: each slice scatters into its own elements.
///
/// Recognised: a Sum with reduce indices whose body is select(cond, value, 0)
/// where a conjunct of cond is `y == E` for an out index y and an int64 E
/// that reads a tensor and mentions no scattered out index. The other
/// statements keep their loop nests (an affine mask such as x(2*i)'s is
/// left to the masked gather: its cost is documented in ad/README.md).
#pragma once

#include <optional>
#include <vector>

#include "ir/ir.h"
#include "ir/scatter_form.h"

namespace tenet::lower {

struct LoweredFunction;  // lowered_function.h

using ir::index_scatter;
using ir::IndexScatter;
using ir::ScatterTarget;

/// Stage lower_scatter: finds the scatter form of every live statement that
/// has one and no GEMM lowering (LoweredFunction::scatters).
void lower_scatters(LoweredFunction& f);

}  // namespace tenet::lower
