/// \file
/// The loop schedule of one Compute statement, from the annotations the
/// `schedule` pass sets (passes/schedule.h, ir/annotations.h): which out
/// loops run outside its reduction, which inside it (accumulating in place),
/// and how many of its outer loops it shares with the statement before it.
///
/// For every backend (lower/README.md). Expects: a verified statement.
/// Guarantees: a schedule that is valid for the statement alone (the outer
/// indices are a prefix of its out indices, the inner ones the rest, the
/// shared ones a prefix of the outer ones; a scan's outer indices are all of
/// them, in order but the scanned one last, and it shares only loops before
/// that); annotations that do not fit the statement are an InternalError
/// naming it. Whether the shared loops match the previous statement's is the
/// backend's to check. For the memory planner: the statements of one nest run
/// interleaved, so a value read anywhere in a nest must stay live until the
/// nest's last statement.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/ir.h"

namespace tenet::lower {

struct LoopSchedule {
  /// Positions in Compute::out of the out loops outside the reduce loops:
  /// in order, but a scanned index last (lower/loops_scan.cpp).
  std::vector<size_t> outer;
  /// Positions in Compute::out of the out loops inside the reduce loops: the
  /// result is initialised, then accumulated in place (empty: one
  /// accumulator per out element, the default).
  std::vector<size_t> inner;
  /// Leading outer loops shared with the previous statement of the block.
  size_t shared = 0;
  /// Unroll-and-jam (0: none): the last outer loop steps by this tile, and
  /// the tile's accumulators interleave inside the reduce loops, each element
  /// still summing its terms in order. Only with no inner loops; the last
  /// out extent is a constant multiple of it. Shared (`shared` = every outer
  /// loop) only with the jammed statement before it: the two then run their
  /// tiles in one pass of the same reduce loops.
  int64_t jam = 0;
  /// Vector lanes of a max or min reduction (0: none): its last reduce loop
  /// steps by this many terms into as many partial accumulators, combined at
  /// the end, the rest of the range into the statement's accumulator. Only
  /// in the default order (no inner loops, no jam).
  int64_t lanes = 0;
};

/// The schedule of `s` (a Compute); the default order without annotations.
LoopSchedule loop_schedule(const ir::Stmt& s);

/// The number of leading loops `s` shares with the previous statement of its
/// block (0 when it starts a loop nest of its own).
size_t shared_loops(const ir::Stmt& s);

}  // namespace tenet::lower
