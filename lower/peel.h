/// \file
/// Border peeling of a windowed reduction: a max-pool with padding, the
/// arg-max of its gradient, a convolution's loops. Their bodies test, at
/// every term, whether the window's tap lies inside the image
/// (`select(2*k + r - 1 >= 0 && ..., x?(.., 2*k + r - 1, ..), c)`), which
/// keeps each element a scalar chain of tests and conditional loads. For
/// most elements every test holds at every tap: the interior. There the
/// body runs without them, as plain loads, and the loop over the last out
/// index vectorises (a 3x3 stride-2 max-pool over 64 channels of 32x32,
/// batch 32: 8.4 -> 2.5 ms).
///
/// Which loops have a border, and where: passes/window_border.h, over the
/// statement's own out loops (those it does not share with a nest; the
/// `schedule` pass shares no loop with a border).
///
/// For every backend (lower/README.md). Expects: a verified Compute and its
/// schedule. Guarantees: on the interior (every peeled index inside its
/// interval) `interior` computes what the body does, term by term (what the
/// intervals prove is folded: passes/index_facts.h), so the peeled loops
/// give the bits of the plain ones; nullopt when nothing would change.
#pragma once

#include <optional>
#include <vector>

#include "ir/ir.h"
#include "lower/schedule.h"
#include "passes/window_border.h"

namespace tenet::lower {

struct Peel {
  /// Own out loops with a border, outermost first; each interior [lo, hi)
  /// is inside its range, not empty, and not all of it.
  std::vector<passes::WindowBorder> loops;
  /// The body where every peeled index is inside its interior.
  ir::Expr interior;
};

/// The peel of `c` (only of a reduction in the default order: no jam, lanes
/// or inner loops), or nullopt.
std::optional<Peel> border_peel(const ir::Compute& c, const LoopSchedule& schedule);

}  // namespace tenet::lower
