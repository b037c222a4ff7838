// The memory plan's lifetimes: the recorder, and the walk over a function
// that feeds it (FunctionEmitter::plan_memory), in the order the emitted
// statements run.
#include "codegen/memory_plan.h"

#include <algorithm>

#include "codegen/function_emitter.h"
#include "support/error.h"

namespace tenet::codegen::detail {

Lifetime& LifetimeRecorder::at(size_t slot) {
  if (slot >= lifetimes_.size()) {
    lifetimes_.resize(slot + 1);
    defined_depth_.resize(slot + 1, 0);
  }
  return lifetimes_[slot];
}

void LifetimeRecorder::begin_loop() {
  loops_.emplace_back();
}

void LifetimeRecorder::end_loop() {
  TENET_ASSERT(!loops_.empty(), "end_loop without begin_loop");
  const size_t depth = loops_.size();  // this loop's body is at this depth
  std::vector<size_t> used = std::move(loops_.back().used);
  loops_.pop_back();
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  for (size_t slot : used) {
    // Defined outside this loop's body: live across all its iterations.
    if (defined_depth_[slot] < depth) at(slot).last = std::max(at(slot).last, position_);
    if (!loops_.empty()) loops_.back().used.push_back(slot);
  }
}

void LifetimeRecorder::define(size_t slot) {
  Lifetime& l = at(slot);
  TENET_ASSERT(l.first < 0, "slot " << slot << " is defined twice");
  l.first = l.last = position_;
  defined_depth_[slot] = loops_.size();
}

void LifetimeRecorder::use(size_t slot) {
  Lifetime& l = at(slot);
  TENET_ASSERT(l.first >= 0, "slot " << slot << " is used before its definition");
  l.last = std::max(l.last, position_);
  if (!loops_.empty()) loops_.back().used.push_back(slot);
}

// ---- FunctionEmitter -------------------------------------------------------

void FunctionEmitter::plan_memory() {
  if (slots_.empty()) return;
  LifetimeRecorder r;
  record_block(r, fn_.body);
  r.next_statement();  // the copies of the outputs not written in place
  for (const auto& [param, value] : output_copies_) record_use(r, value);
  const std::vector<Lifetime>& lifetimes = r.lifetimes();
  for (size_t i = 0; i < slots_.size(); ++i) {
    TENET_ASSERT(r.defined(i), "workspace slot " << slots_[i].name << " is never written");
    slots_[i].live = lifetimes[i];
  }
  // A slot is exclusive when it is live together with every other slot, so
  // none can share its memory: it starts before every other ends and ends
  // after every other starts (a slot is always live together with itself).
  int earliest_last = slots_.front().live.last, latest_first = slots_.front().live.first;
  for (const WorkspaceSlot& slot : slots_) {
    earliest_last = std::min(earliest_last, slot.live.last);
    latest_first = std::max(latest_first, slot.live.first);
  }
  for (WorkspaceSlot& slot : slots_)
    slot.exclusive = slot.live.first <= earliest_last && latest_first <= slot.live.last;
}

void FunctionEmitter::record_block(LifetimeRecorder& r, const std::vector<ir::Stmt>& body) {
  for (const ir::Stmt& s : body) {
    if (s.kind == ir::StmtKind::Loop) {
      if (liveness_.live(*s.loop)) record_loop(r, *s.loop);
      continue;
    }
    const ir::Compute& c = s.compute;
    if (!liveness_.live(c)) continue;
    // A statement's reads and writes share its position, so what it writes
    // never shares memory with what it reads. The statements of one loop
    // nest (codegen/schedule.h) run interleaved: they share one position.
    if (shared_loops(s) == 0) r.next_statement();
    record_reads(r, c.body);
    if (c.init) record_use(r, c.init);
    if (auto gemm = gemms_.find(&s); gemm != gemms_.end())
      for (const ir::ValuePtr& buffer : gemm->second.lowering->buffers)
        record_write(r, slot_of_.at(buffer.get()));
    if (auto slot = slot_of_.find(c.result.get()); slot != slot_of_.end())
      record_write(r, slot->second);
  }
}

void FunctionEmitter::record_loop(LifetimeRecorder& r, const ir::Loop& loop) {
  // The header, outside the body: the carried tensors' buffers are defined
  // here, so they stay live across every iteration (and after the loop, as
  // long as its results are read). A parameter and a result may point at
  // the init, at the buffers, or at an outside next value.
  r.next_statement();
  for (const auto& c : loop.carried) {
    if (!c.param || !liveness_.live(c)) continue;
    std::vector<size_t> slots;
    auto add = [&](const ir::ValuePtr& v) {
      if (auto it = slot_of_.find(v.get()); it != slot_of_.end()) slots.push_back(it->second);
      if (auto it = aliases_.find(v.get()); it != aliases_.end())
        slots.insert(slots.end(), it->second.begin(), it->second.end());
    };
    add(c.init);
    switch (carry_kind_.at(&c)) {
      case CarryKind::Unchanged:
        break;
      case CarryKind::Alias:
        add(c.next);
        break;
      case CarryKind::InPlace:  // (several carried tensors may share one next value)
        slots.push_back(slot_of_.at(c.next.get()));
        record_write(r, slots.back());
        break;
      case CarryKind::Copy:
        slots.push_back(carry_slot_.at(&c));
        record_write(r, slots.back());
        break;
    }
    aliases_[c.param.get()] = slots;
    aliases_[c.result.get()] = loop.trip > 0 ? result_slots(c) : slots;
  }
  r.begin_loop();
  record_block(r, loop.body);
  // The end of an iteration: Copy carries copy their next value into their
  // buffers; a live-out is its last next value.
  r.next_statement();
  for (const auto& c : loop.carried) {
    if (!liveness_.live(c)) continue;
    if (!c.param) {
      if (auto it = slot_of_.find(c.next.get()); it != slot_of_.end())
        aliases_[c.result.get()] = {it->second};
      else if (auto alias = aliases_.find(c.next.get()); alias != aliases_.end())
        aliases_[c.result.get()] = alias->second;
    } else if (carry_kind_.at(&c) == CarryKind::Copy) {
      record_use(r, c.next);
      r.use(carry_slot_.at(&c));
    }
  }
  r.end_loop();
}

// After at least one iteration, a carried result is what the last iteration's
// end assigned to its state (cpp_statements.cpp, emit_loop): the carry buffer
// of a copy, the next value of an alias or an in-place update, the init only
// when it never changes. Never the init otherwise, so the slots the init may
// point at are not kept alive by reads of the result (with n loops in a row
// that list would grow by a slot per loop: quadratic, every buffer live).
std::vector<size_t> FunctionEmitter::result_slots(const ir::Loop::Carried& c) const {
  std::vector<size_t> slots;
  auto add = [&](const ir::ValuePtr& v) {
    if (auto it = slot_of_.find(v.get()); it != slot_of_.end()) slots.push_back(it->second);
    if (auto it = aliases_.find(v.get()); it != aliases_.end())
      slots.insert(slots.end(), it->second.begin(), it->second.end());
  };
  switch (carry_kind_.at(&c)) {
    case CarryKind::Unchanged:
      add(c.init);
      break;
    case CarryKind::Alias:
      add(c.next);
      break;
    case CarryKind::InPlace:
      slots.push_back(slot_of_.at(c.next.get()));
      break;
    case CarryKind::Copy:
      slots.push_back(carry_slot_.at(&c));
      break;
  }
  return slots;
}

void FunctionEmitter::record_reads(LifetimeRecorder& r, const ir::Expr& e) const {
  if (e->kind == ir::ExprKind::Read) record_use(r, e->tensor);
  for (const ir::Expr& a : e->args) record_reads(r, a);
}

void FunctionEmitter::record_use(LifetimeRecorder& r, const ir::ValuePtr& v) const {
  if (auto it = slot_of_.find(v.get()); it != slot_of_.end()) r.use(it->second);
  if (auto it = aliases_.find(v.get()); it != aliases_.end())
    for (size_t slot : it->second) r.use(slot);
}

void FunctionEmitter::record_write(LifetimeRecorder& r, size_t slot) const {
  if (r.defined(slot))
    r.use(slot);
  else
    r.define(slot);
}

}  // namespace tenet::codegen::detail
