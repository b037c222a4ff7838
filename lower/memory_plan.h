/// \file
/// `plan_memory`: the workspace of a lowered function (lowered.h), typed for
/// every backend: which values live in the caller's buffers and which in
/// workspace slots (temporaries, GEMM buffers, the alternating buffers of
/// loop-carried tensors), each slot's element count (ir::SizeExpr), how each
/// carried tensor advances, and when each slot holds a value, as a range of
/// statement positions. The run-time half, tenet::plan_workspace
/// (runtime/tenet_runtime.h), turns these ranges and the slots' sizes at the
/// call's sizes into offsets in one arena, so that slots that are never live
/// together share memory. A top-level reshape that is not an output is a
/// view of its source's memory, not a copy (MemoryPlan::views).
///
/// Expects: find_liveness and lower_gemms have run. Guarantees: a slot's
/// range covers its definition and every use (statements numbered in the
/// order they run; the statements of one loop nest, lower/schedule.h, share
/// a position); a use inside a loop whose body does not contain the slot's
/// definition (a value from before the loop, or a loop's carried buffers,
/// which are defined at the loop's header) extends the range to the end of
/// that loop, since the next iteration reads it again. A value defined in a
/// loop body and read only later in the same iteration needs no more: the
/// next iteration writes it again before reading it. A slot is exclusive when
/// it is live together with every other slot (it shares memory with none).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "ir/ir.h"

namespace tenet::lower {

/// How a loop-carried tensor moves from one iteration to the next.
enum class CarryKind {
  Unchanged,  // next is the parameter itself: nothing to do
  Alias,      // next is defined outside the loop and never changes: point at it
  InPlace,    // next is computed in the body into alternating buffers: point at it
  Copy,       // anything else: copy next into this tensor's alternating buffers
};

/// Statement positions [first, last] during which a slot holds a value.
struct Lifetime {
  int first = -1;  // -1: never used
  int last = -1;
};

class LifetimeRecorder {
 public:
  /// Moves on to the next statement; returns its position (0, 1, ...).
  int next_statement() { return ++position_; }
  /// The statements from here to end_loop() are the body of a loop.
  void begin_loop();
  void end_loop();

  /// `slot` is written first at the current statement (its definition).
  void define(size_t slot);
  /// `slot` is read or written at the current statement.
  void use(size_t slot);
  bool defined(size_t slot) const {
    return slot < lifetimes_.size() && lifetimes_[slot].first >= 0;
  }

  /// Per slot, in slot order (slots never mentioned have first == -1).
  const std::vector<Lifetime>& lifetimes() const { return lifetimes_; }

 private:
  struct OpenLoop {
    std::vector<size_t> used;  // slots used in the body so far
  };
  Lifetime& at(size_t slot);

  int position_ = -1;
  std::vector<Lifetime> lifetimes_;
  std::vector<size_t> defined_depth_;  // per slot: how many loops enclose its definition
  std::vector<OpenLoop> loops_;        // innermost last
};

/// A slot of the workspace: one temporary, or the pair of alternating buffers
/// a loop-carried tensor needs.
struct WorkspaceSlot {
  /// The temporary (a statement's result or a GEMM buffer), the in-place next
  /// value, or the carried parameter (Copy buffers).
  const ir::Value* value = nullptr;
  ElemType type = ElemType::F32;
  /// Its elements are the product of these (a chunked GEMM buffer's capacity).
  std::vector<ir::SizeExpr> shape;
  int copies = 1;
  Lifetime live;
  bool exclusive = false;
};

/// A temporary that lives in one row at a time (row_local.h): computed and
/// read only inside the shared loops of one nest, at their current
/// iteration, so a backend keeps a row of it local to those loops (C++: an
/// array declared inside them) instead of the whole tensor in the workspace.
struct RowLocal {
  size_t depth = 0;                 // the nest's loops it lives inside (at least 1)
  std::vector<size_t> shared_dims;  // its dimensions those loops run along, outermost first
  int64_t elements = 0;             // one row: the product of its other extents
};

struct MemoryPlan {
  /// Per output: written in place by the statement that computes it (a
  /// top-level result, the first time it is listed), or copied at the end.
  std::vector<bool> output_in_place;
  std::vector<WorkspaceSlot> slots;            // in the order the function first needs them
  std::map<const ir::Value*, size_t> slot_of;  // temporaries and in-place next values
  std::map<const ir::Loop::Carried*, CarryKind> carry_kind;  // live carried tensors
  std::map<const ir::Loop::Carried*, size_t> carry_slot;     // Copy: the slot of its buffers
  std::set<const ir::Value*> in_place;                       // InPlace next values
  /// Loop parameters and results, and views: the slots they may point into.
  std::map<const ir::Value*, std::vector<size_t>> aliases;
  /// Views: top-level reshapes (ir/reshape.h) that are not outputs, of a
  /// row-major source into a row-major result. They have no storage: they
  /// point at their source's, which stays live as long as they are read.
  std::set<const ir::Value*> views;
  /// Temporaries kept a row at a time (RowLocal): no workspace slot.
  std::map<const ir::Value*, RowLocal> row_local;
};

struct LoweredFunction;  // lowered_function.h

/// The memory plan of `lowered` (LoweredFunction::memory).
void plan_memory(LoweredFunction& lowered);

}  // namespace tenet::lower
