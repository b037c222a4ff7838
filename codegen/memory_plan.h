/// \file
/// The memory plan's compile-time half: when each workspace slot of a
/// function holds a value, as a range of statement positions. The run-time
/// half, tenet::plan_workspace (runtime/tenet_runtime.h), turns these ranges
/// and the slots' sizes at the call's sizes into offsets in one arena, so that
/// slots that are never live together share memory.
///
/// Internal to codegen/. Expects: the emitter numbers statements in the order
/// they run, calls define() for a slot at the statement that first writes it
/// and use() at every statement that reads or writes it. Guarantees: a slot's
/// range covers its definition and every use; a use inside a loop whose body
/// does not contain the slot's definition (a value from before the loop, or a
/// loop's carried buffers, which are defined at the loop's header) extends the
/// range to the end of that loop, since the next iteration reads it again.
/// A value defined in a loop body and read only later in the same iteration
/// needs no more: the next iteration writes it again before reading it.
#pragma once

#include <cstddef>
#include <vector>

namespace tenet::codegen::detail {

/// Statement positions [first, last] during which a slot holds a value.
struct Lifetime {
  int first = -1;  // -1: never used (the emitter emits no such slot)
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

}  // namespace tenet::codegen::detail
