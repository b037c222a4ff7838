// The memory plan (memory_plan.h): the lifetime recorder, then the planner,
// which decides storage in the order the function runs and records each
// slot's lifetime in the order the emitted statements run.
#include "lower/memory_plan.h"

#include <algorithm>

#include "ir/mutator.h"
#include "lower/lowered_function.h"
#include "lower/row_local.h"
#include "lower/schedule.h"
#include "support/error.h"

namespace tenet::lower {

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

namespace {

void collect_defined(const std::vector<ir::Stmt>& body, std::set<const ir::Value*>& out) {
  for (const ir::Stmt& s : body) {
    if (s.kind == ir::StmtKind::Compute) {
      out.insert(s.compute.result.get());
      continue;
    }
    for (const auto& c : s.loop->carried) {
      if (c.param) out.insert(c.param.get());
      out.insert(c.result.get());
    }
    collect_defined(s.loop->body, out);
  }
}

class Planner {
 public:
  Planner(const LoweredFunction& lowered, MemoryPlan& plan) : lowered_(lowered), plan_(plan) {}

  void run() {
    const ir::Function& fn = *lowered_.function;
    outputs(fn);
    for (const ir::Stmt& s : fn.body)  // first: they end nests (nests.h)
      if (s.kind == ir::StmtKind::Compute && lowered_.liveness.live(s.compute) && is_view(s))
        plan_.views.insert(s.compute.result.get());
    plan_.row_local = find_row_locals(lowered_, in_callers_buffer_);
    storage_block(fn.body, nullptr);
    if (plan_.slots.empty()) return;
    record_block(fn.body);
    r_.next_statement();  // the copies of the outputs not written in place
    for (size_t i = 0; i < fn.outputs.size(); ++i)
      if (!plan_.output_in_place[i]) record_use(fn.outputs[i]);
    const std::vector<Lifetime>& lifetimes = r_.lifetimes();
    for (size_t i = 0; i < plan_.slots.size(); ++i) {
      TENET_ASSERT(r_.defined(i),
                   "workspace slot of " << plan_.slots[i].value->name << " is never written");
      plan_.slots[i].live = lifetimes[i];
    }
    // A slot is exclusive when it is live together with every other slot, so
    // none can share its memory: it starts before every other ends and ends
    // after every other starts (a slot is always live together with itself).
    int earliest_last = plan_.slots.front().live.last;
    int latest_first = plan_.slots.front().live.first;
    for (const WorkspaceSlot& slot : plan_.slots) {
      earliest_last = std::min(earliest_last, slot.live.last);
      latest_first = std::max(latest_first, slot.live.first);
    }
    for (WorkspaceSlot& slot : plan_.slots)
      slot.exclusive = slot.live.first <= earliest_last && latest_first <= slot.live.last;
  }

 private:
  // ---- storage: where each value lives --------------------------------------
  void outputs(const ir::Function& fn) {
    std::set<const ir::Value*> top_level_results, placed;
    for (const ir::Stmt& s : fn.body)
      if (s.kind == ir::StmtKind::Compute) top_level_results.insert(s.compute.result.get());
    for (const ir::ValuePtr& in : fn.inputs) placed.insert(in.get());
    // A statement writes its result straight into the caller's buffer; an
    // output that is an input, a loop result or a repeat is copied at the end.
    for (const ir::ValuePtr& v : fn.outputs) {
      const bool in_place = top_level_results.count(v.get()) && !placed.count(v.get());
      plan_.output_in_place.push_back(in_place);
      if (in_place) {
        placed.insert(v.get());
        in_callers_buffer_.insert(v.get());
      }
    }
  }

  size_t add_slot(const ir::Value& v, std::vector<ir::SizeExpr> shape, int copies) {
    plan_.slots.push_back(WorkspaceSlot{&v, v.type, std::move(shape), copies, {}, false});
    return plan_.slots.size() - 1;
  }

  void storage_block(const std::vector<ir::Stmt>& body, const ir::Loop* enclosing) {
    for (const ir::Stmt& s : body) {
      if (s.kind == ir::StmtKind::Loop) {
        storage_loop(*s.loop);
        continue;
      }
      const ir::ValuePtr& result = s.compute.result;
      if (!lowered_.liveness.live(s.compute)) continue;
      if (plan_.views.count(result.get())) continue;  // (found first, in run)
      if (in_callers_buffer_.count(result.get()) || plan_.row_local.count(result.get())) {
        // An output, written in place; a row at a time, outside the workspace.
      } else if (enclosing && plan_.in_place.count(result.get())) {
        plan_.slot_of[result.get()] = add_slot(*result, result->shape, 2);
      } else {
        plan_.slot_of[result.get()] = add_slot(*result, result->shape, 1);
      }
      if (auto gemm = lowered_.gemms.find(&s); gemm != lowered_.gemms.end())
        for (const ir::ValuePtr& buffer : gemm->second.buffers)
          plan_.slot_of[buffer.get()] = add_slot(*buffer, gemm->second.capacity_shape(*buffer), 1);
    }
  }

  // A reshape whose result can point at its source: no init, and both
  // row-major (storage_block asks only at top level: in a loop body, the
  // source's buffer may change between iterations while the view is read).
  bool is_view(const ir::Stmt& s) const {
    const ir::Compute& c = s.compute;
    return s.annotations.reshape && c.op == ir::ReduceOp::None &&
           !in_callers_buffer_.count(c.result.get()) && c.result->layout.empty() &&
           c.body->kind == ir::ExprKind::Read && c.body->tensor->layout.empty();
  }

  void storage_loop(const ir::Loop& loop) {
    if (!lowered_.liveness.live(loop)) return;
    std::set<const ir::Value*> inside;
    collect_defined(loop.body, inside);
    std::set<const ir::Value*> body_results;
    for (const ir::Stmt& s : loop.body)
      if (s.kind == ir::StmtKind::Compute) body_results.insert(s.compute.result.get());
    std::set<const ir::Value*> own_params;
    for (const auto& c : loop.carried)
      if (c.param) own_params.insert(c.param.get());
    for (const auto& c : loop.carried) {
      if (!c.param || !lowered_.liveness.live(c)) continue;
      CarryKind kind = CarryKind::Copy;  // another parameter, or a nested loop's result
      if (c.next == c.param)
        kind = CarryKind::Unchanged;
      else if (!inside.count(c.next.get()) && !own_params.count(c.next.get()))
        kind = CarryKind::Alias;
      else if (body_results.count(c.next.get()))
        kind = CarryKind::InPlace;
      plan_.carry_kind[&c] = kind;
      if (kind == CarryKind::InPlace) plan_.in_place.insert(c.next.get());
    }
    storage_block(loop.body, &loop);
    for (const auto& c : loop.carried)
      if (c.param && lowered_.liveness.live(c) && plan_.carry_kind.at(&c) == CarryKind::Copy)
        plan_.carry_slot[&c] = add_slot(*c.param, c.param->shape, 2);
  }

  // ---- lifetimes, in the order the statements run ---------------------------
  void record_block(const std::vector<ir::Stmt>& body) {
    for (const ir::Stmt& s : body) {
      if (s.kind == ir::StmtKind::Loop) {
        if (lowered_.liveness.live(*s.loop)) record_loop(*s.loop);
        continue;
      }
      const ir::Compute& c = s.compute;
      if (!lowered_.liveness.live(c)) continue;
      // A statement's reads and writes share its position, so what it writes
      // never shares memory with what it reads. The statements of one loop
      // nest (lower/schedule.h) run interleaved: they share one position.
      if (shared_loops(s) == 0) r_.next_statement();
      record_reads(c.body);
      if (plan_.views.count(c.result.get())) {
        std::vector<size_t> source;
        add_slots_of(c.body->tensor, source);
        plan_.aliases[c.result.get()] = source;
      }
      if (c.init) record_use(c.init);
      if (auto gemm = lowered_.gemms.find(&s); gemm != lowered_.gemms.end())
        for (const ir::ValuePtr& buffer : gemm->second.buffers)
          record_write(plan_.slot_of.at(buffer.get()));
      if (auto slot = plan_.slot_of.find(c.result.get()); slot != plan_.slot_of.end())
        record_write(slot->second);
    }
  }

  void record_loop(const ir::Loop& loop) {
    // The header, outside the body: the carried tensors' buffers are defined
    // here, so they stay live across every iteration (and after the loop, as
    // long as its results are read). A parameter and a result may point at
    // the init, at the buffers, or at an outside next value.
    r_.next_statement();
    for (const auto& c : loop.carried) {
      if (!c.param || !lowered_.liveness.live(c)) continue;
      std::vector<size_t> slots;
      auto add = [&](const ir::ValuePtr& v) { add_slots_of(v, slots); };
      add(c.init);
      switch (plan_.carry_kind.at(&c)) {
        case CarryKind::Unchanged:
          break;
        case CarryKind::Alias:
          add(c.next);
          break;
        case CarryKind::InPlace:  // (several carried tensors may share one next value)
          slots.push_back(plan_.slot_of.at(c.next.get()));
          record_write(slots.back());
          break;
        case CarryKind::Copy:
          slots.push_back(plan_.carry_slot.at(&c));
          record_write(slots.back());
          break;
      }
      plan_.aliases[c.param.get()] = slots;
      plan_.aliases[c.result.get()] = loop.trip > 0 ? result_slots(c) : slots;
    }
    r_.begin_loop();
    record_block(loop.body);
    // The end of an iteration: Copy carries copy their next value into their
    // buffers; a live-out is its last next value.
    r_.next_statement();
    for (const auto& c : loop.carried) {
      if (!lowered_.liveness.live(c)) continue;
      if (!c.param) {
        if (auto it = plan_.slot_of.find(c.next.get()); it != plan_.slot_of.end())
          plan_.aliases[c.result.get()] = {it->second};
        else if (auto alias = plan_.aliases.find(c.next.get()); alias != plan_.aliases.end())
          plan_.aliases[c.result.get()] = alias->second;
      } else if (plan_.carry_kind.at(&c) == CarryKind::Copy) {
        record_use(c.next);
        r_.use(plan_.carry_slot.at(&c));
      }
    }
    r_.end_loop();
  }

  // Appends the slots `v` may live in: its own, or those it may point into.
  void add_slots_of(const ir::ValuePtr& v, std::vector<size_t>& slots) const {
    if (auto it = plan_.slot_of.find(v.get()); it != plan_.slot_of.end())
      slots.push_back(it->second);
    if (auto it = plan_.aliases.find(v.get()); it != plan_.aliases.end())
      slots.insert(slots.end(), it->second.begin(), it->second.end());
  }

  // After at least one iteration, a carried result is what the last iteration's
  // end assigned to its state (cpp_statements.cpp, emit_loop): the carry buffer
  // of a copy, the next value of an alias or an in-place update, the init only
  // when it never changes. Never the init otherwise, so the slots the init may
  // point at are not kept alive by reads of the result (with n loops in a row
  // that list would grow by a slot per loop: quadratic, every buffer live).
  std::vector<size_t> result_slots(const ir::Loop::Carried& c) const {
    std::vector<size_t> slots;
    auto add = [&](const ir::ValuePtr& v) { add_slots_of(v, slots); };
    switch (plan_.carry_kind.at(&c)) {
      case CarryKind::Unchanged:
        add(c.init);
        break;
      case CarryKind::Alias:
        add(c.next);
        break;
      case CarryKind::InPlace:
        slots.push_back(plan_.slot_of.at(c.next.get()));
        break;
      case CarryKind::Copy:
        slots.push_back(plan_.carry_slot.at(&c));
        break;
    }
    return slots;
  }

  // Every read, those inside computed indices (W(idx(i), j) reads idx) included.
  void record_reads(const ir::Expr& e) {
    for (const ir::Expr& read : ir::reads_of(e)) record_use(read->tensor);
  }

  void record_use(const ir::ValuePtr& v) {
    if (auto it = plan_.slot_of.find(v.get()); it != plan_.slot_of.end()) r_.use(it->second);
    if (auto it = plan_.aliases.find(v.get()); it != plan_.aliases.end())
      for (size_t slot : it->second) r_.use(slot);
  }

  void record_write(size_t slot) {
    if (r_.defined(slot))
      r_.use(slot);
    else
      r_.define(slot);
  }

  const LoweredFunction& lowered_;
  MemoryPlan& plan_;
  LifetimeRecorder r_;
  std::set<const ir::Value*> in_callers_buffer_;
};

}  // namespace

void plan_memory(LoweredFunction& lowered) {
  lowered.memory = MemoryPlan{};
  Planner(lowered, lowered.memory).run();
}

}  // namespace tenet::lower
