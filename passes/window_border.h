/// \file
/// The borders of a windowed reduction (a max-pool with padding, the arg-max
/// of its gradient, a convolution's loops): for which values of its out
/// indices every bound test of its body holds at every term. Shared by the
/// `schedule` pass (a loop with a border is not shared with a nest, so that
/// it can be peeled) and lower/peel.h (which peels it).
///
/// A test counts when it is an affine comparison (a select's condition or
/// one of its conjuncts, or a guarded read's bound on one dimension) in
/// exactly one of the candidate out indices, reduce indices over constant
/// ranges and a constant: it holds at every term for an interval of that
/// index. Each candidate's interval is its constant range intersected with
/// those of its tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/ir.h"

namespace tenet::passes {

struct WindowBorder {
  size_t dim = 0;              // a position in Compute::out
  int64_t begin = 0, end = 0;  // its range
  int64_t lo = 0, hi = 0;      // where every test holds (empty when lo >= hi)
};

/// The candidates (positions in `c.out` with constant ranges) whose interval
/// is not their whole range, in the order given; none for an assignment or
/// a reduction without reduce indices.
std::vector<WindowBorder> window_borders(const ir::Compute& c,
                                         const std::vector<size_t>& candidates);

/// Whether peeling pays: there is a border, and every border's interval
/// holds at least half its range (a 3x3 window over 16 outputs: 15; a
/// triangle's `j + r < N` over r in 0:N holds only at j = 0).
bool worth_peeling(const std::vector<WindowBorder>& borders);

}  // namespace tenet::passes
