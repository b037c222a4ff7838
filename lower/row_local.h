/// \file
/// Part of `plan_memory` (memory_plan.h): the temporaries a nest keeps a row
/// at a time. Softmax's `e(i, j, k, l) = exp(x(i, j, k, l) - m(i, j, k))`,
/// summed and divided in the same nest over (i, j, k), needs only the row of
/// l that the current (i, j, k) computes: 512 bytes that stay in the first
/// cache level, instead of a tensor the size of the input written and read
/// back through memory.
///
/// A temporary is row-local when (1) a member of a nest (nests.h) computes
/// it and it is no output, no loop's carried value and no start (init) of a
/// sum; (2) every read of it is in the body of a later member of the same
/// nest; (3) depth d, the loops the computing member shares with every
/// reader and each member in between, is at least 1; (4) every read indexes
/// the dimensions those d loops run along with the reader's own indices of
/// those loops, plainly (no guard, no computed index, no offset), so it
/// reads what the current iteration computed; (5) no member of the nest is
/// jammed (a jam steps its loop by tiles); (6) its other extents are
/// constants whose product is at most kMaxRowLocalBytes.
///
/// Expects: find_liveness, lower_gemms and lower_scatters have run, and the
/// plan's views and outputs written in place are known. Guarantees: what
/// the conditions above say; a backend that declares the row inside the
/// d-th shared loop (so each iteration, and each thread, has its own)
/// computes the same elements as with the whole tensor.
#pragma once

#include <cstdint>
#include <map>
#include <set>

#include "ir/ir.h"
#include "lower/memory_plan.h"

namespace tenet::lower {

struct LoweredFunction;  // lowered_function.h

/// The most bytes of one row-local row (a backend's stack array).
constexpr int64_t kMaxRowLocalBytes = 16 * 1024;

/// The row-local temporaries of `lowered` (which names no others in
/// `in_callers_buffer`: the outputs written in place).
std::map<const ir::Value*, RowLocal> find_row_locals(
    const LoweredFunction& lowered, const std::set<const ir::Value*>& in_callers_buffer);

}  // namespace tenet::lower
