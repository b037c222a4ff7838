// One scheduled statement in the loop tree: out loops around (reduce loops
// around) one assignment, in the order its schedule gives (lower/schedule.h:
// out loops inside the reduce loops accumulate in place or in a block),
// reduce loops only where the body's guard can hold (loop_bounds.h).
#include <algorithm>

#include "ir/affine.h"
#include "ir/scatter_form.h"
#include "lower/loop_builder.h"
#include "passes/schedule.h"
#include "support/error.h"

namespace tenet::lower::detail {

void LoopBuilder::use_guard(StatementState& st, const GuardBounds& g) const {
  st.guard = &g;
  st.narrowed.clear(), st.single.clear();
  for (size_t d = 0; d < st.c.reduce.size(); ++d) {
    st.only[d].reset();
    if (!g.reduce[d].narrowed()) continue;
    st.only[d] = single_iteration(st.c.reduce[d], g.reduce[d], st.ctx.ranges);
    std::string& list = st.only[d] ? st.single : st.narrowed;
    list += (list.empty() ? "" : ", ") + st.c.reduce[d].index;
  }
}

std::pair<IndexExpr, IndexExpr> LoopBuilder::reduce_bounds(const StatementState& st,
                                                           size_t d) const {
  const ir::Dim& dim = st.c.reduce[d];
  const ReduceRange& range = st.guard->reduce[d];
  if (range.narrowed())
    return {loop_start(dim, range, st.ctx.ranges), loop_end(dim, range, st.ctx.ranges)};
  return {ix::size(dim.lo), ix::size(dim.hi)};
}

void LoopBuilder::open_out(Cursor& out, const StatementState& st, const std::vector<size_t>& dims,
                           size_t from) const {
  for (size_t k = from; k < dims.size(); ++k)
    out.open(for_node(st.out_vars[dims[k]], ix::constant(0),
                      ix::extent(st.c.result.get(), int(dims[k]))));
}

void LoopBuilder::open_reduce(Cursor& out, const StatementState& st, size_t count) const {
  if (!st.narrowed.empty())
    out.note("Loops of " + st.narrowed +
             " only where the guard holds: the other terms add nothing.");
  if (!st.single.empty())
    out.note("The guard holds for one value of " + st.single + " only: a local instead of a loop.");
  for (size_t d = 0; d < count; ++d) {
    if (st.only[d]) {
      Node scope;  // a scope, so that it closes like a loop
      scope.kind = NodeKind::Scope;
      out.open(std::move(scope));
      Node let;
      let.kind = NodeKind::Let;
      let.var = st.reduce_vars[d];
      let.index = *st.only[d];
      out.add(std::move(let));
    } else {
      auto [first, end] = reduce_bounds(st, d);
      out.open(for_node(st.reduce_vars[d], first, end));
    }
  }
}

void LoopBuilder::statement(Cursor& out, const Scheduled& m, const std::vector<Var>& loop_vars,
                            const Context& ctx, bool in_nest, JamGroup* group) {
  const ir::Stmt& s = *m.stmt;
  const ir::Compute& c = s.compute;
  StatementState st(m, ctx);
  st.in_nest = in_nest;
  st.group = group;
  st.shared = loop_vars.size();
  st.ctx.statement = c.result->name;
  st.ctx.check_indices = checks_indices_of(s);
  Node region = statement_region(s, st.ctx.check_indices);
  if (group) {
    region.reserved = {group->tile, group->lane};
    for (const Var& v : group->reduce_vars) region.reserved.push_back(v);
  }
  // The shared loops (outermost out indices) are already open; then every
  // index of the statement, in the order of its dimensions.
  auto bind = [&](const std::string& index, const Var& v, const ir::Dim& d) {
    Binding b{index, v, d.lo, d.hi};
    st.ctx.bind(b);
    region.bindings.push_back(b);
  };
  for (size_t p = 0; p < loop_vars.size(); ++p) {
    const ir::Dim& d = c.out[m.schedule.outer[p]];
    bind(d.index, loop_vars[p], d);
  }
  for (size_t d = 0; d < c.out.size(); ++d) {
    st.out_vars.push_back(d < loop_vars.size() ? loop_vars[d] : fresh(c.out[d].index));
    bind(c.out[d].index, st.out_vars[d], c.out[d]);
  }
  for (size_t d = 0; d < c.reduce.size(); ++d) {
    st.reduce_vars.push_back(group ? group->reduce_vars.at(d) : fresh(c.reduce[d].index));
    bind(c.reduce[d].index, st.reduce_vars[d], c.reduce[d]);
  }
  st.target.tensor = c.result.get();
  st.target.indices = ir::plain_indices(c.out);
  st.only.resize(c.reduce.size());
  use_guard(st, m.guard);
  st.own_outer = m.schedule.outer.size() - loop_vars.size();
  st.type = c.result->type;
  st.computed = compute_type(st.type);  // float16: float
  out.open(std::move(region));
  if (c.op == ir::ReduceOp::None)
    assignment(out, st);
  else
    reduction(out, st);
  out.close();
}

void LoopBuilder::assignment(Cursor& out, StatementState& st) {
  const LoopSchedule& schedule = st.m.schedule;
  const ir::Compute& c = st.c;
  std::optional<ParallelWork> work;
  if (!st.in_nest && !schedule.outer.empty()) work = parallel_work({st.m});
  if (st.own_outer > 0) {  // the innermost loop is this statement's own: loads above it
    std::vector<size_t> outside(schedule.outer.begin(), schedule.outer.end() - 1);
    for (size_t k = st.shared; k < outside.size(); ++k) {
      Node loop = for_node(st.out_vars[outside[k]], ix::constant(0),
                           ix::extent(c.result.get(), int(outside[k])),
                           k == st.shared ? work : std::nullopt);
      loop.independent = true;
      out.open(std::move(loop));
    }
    st.ctx.statement_local_names = st.in_nest && st.own_outer == 1;
    hoist_invariant_reads(out, c.body, {c.out[schedule.outer.back()]}, st.ctx);
    const size_t last = schedule.outer.back();
    Node loop = for_node(st.out_vars[last], ix::constant(0), ix::extent(c.result.get(), int(last)),
                         outside.size() == st.shared ? work : std::nullopt);
    loop.independent = true;
    out.open(std::move(loop));
  }
  out.add(assign_node(st.target, expr_operand(c.body), ir::ReduceOp::None, st.computed));
  out.close(st.own_outer);
}

void LoopBuilder::start_accumulator(StatementState& st) {
  const ir::Compute& c = st.c;
  st.start.kind = Operand::Identity;
  st.start.of = c.op;
  if (c.init) {
    Place init;
    init.tensor = c.init.get();
    init.indices = st.target.indices;
    st.start = load(init);
  }
  // In a nest, where statements are siblings, the accumulator is named after
  // the result (a jam group's members are siblings too).
  st.acc = fresh("acc", true);
  st.acc.accumulates = c.result.get();
  st.acc.sibling = st.in_nest && (st.own_outer == 0 || st.group);
  // A float32 sum accumulates in double, rounded once (ir/scatter_form.h).
  st.wide = ir::accumulates_in_double(c);
}

void LoopBuilder::reduction(Cursor& out, StatementState& st) {
  if (std::optional<ScanPlan> plan = scan_plan(st)) return scan(out, st, *plan);
  start_accumulator(st);
  const LoopSchedule& schedule = st.m.schedule;
  const ir::Compute& c = st.c;
  // Peeled when every peeled loop is its own (a nest opens the shared ones),
  // and a loop stays outside the split one (the parallel loop would
  // otherwise cover its first part only).
  bool peeled = st.m.peel && st.own_outer > 0 && schedule.outer.size() > 1;
  for (size_t q = 0; peeled && q < st.shared; ++q)
    for (const passes::WindowBorder& l : st.m.peel->loops)
      peeled = peeled && l.dim != schedule.outer[q];
  // A jammed statement opens its last outer loop below, by tiles; a peeled
  // one by its border and interior.
  const std::vector<size_t> opened(schedule.outer.begin(),
                                   schedule.outer.end() - (schedule.jam > 0 || peeled ? 1 : 0));
  std::optional<ParallelWork> work;
  if (!st.in_nest && !schedule.outer.empty()) work = parallel_work({st.m});
  for (size_t k = st.shared; k < opened.size(); ++k) {
    Node loop =
        for_node(st.out_vars[opened[k]], ix::constant(0),
                 ix::extent(c.result.get(), int(opened[k])), k == st.shared ? work : std::nullopt);
    loop.independent = true;  // one accumulator per out element
    out.open(std::move(loop));
  }
  const bool work_unused = opened.size() == st.shared;  // the jam's tiles run in parallel
  if (!schedule.inner.empty() && st.wide) return wide_block(out, st);
  if (!schedule.inner.empty()) return in_place_block(out, st);
  if (schedule.jam > 0) {
    JamMember member{&st.m,
                     st.target,
                     st.start,
                     st.acc,
                     st.wide,
                     st.computed,
                     st.out_vars[schedule.outer.back()]};
    if (st.group) {
      st.group->members.push_back(std::move(member));
      return;
    }
    TENET_ASSERT(st.own_outer > 0, "statement " << c.result->name
                                                << " shares its jammed loop with a statement "
                                                   "that does not jam the same loop");
    const std::string& index = c.out[schedule.outer.back()].index;
    JamGroup alone{fresh(index + "_tile"), fresh(index + "_lane"), {}, {}};
    alone.members.push_back(std::move(member));
    jam_group(out, alone, work_unused ? work : std::nullopt, false,
              [&] { open_reduce(out, st, c.reduce.size()); });
    out.close(st.own_outer - 1);
    return;
  }
  if (!peeled) {
    element(out, st, st.m.guard);
    out.close(st.own_outer);
    return;
  }
  this->peeled(out, st);
  out.close(st.own_outer - 1);
}

void LoopBuilder::element(Cursor& out, StatementState& st, const GuardBounds& g) {
  // One element: its accumulator, its terms under `g`, the store. What the
  // element hoists stays in it.
  const Context outside = st.ctx;
  const ir::Compute& c = st.c;
  use_guard(st, g);
  out.add(local_node(st.acc, st.computed, st.wide, st.start));
  st.ctx.statement_local_names = st.in_nest && st.own_outer == 0;
  hoist_invariant_reads(out, g.body, c.reduce, st.ctx);
  if (st.m.schedule.lanes > 0 && !st.only[c.reduce.size() - 1]) {
    lanes(out, st, g);
  } else {
    open_reduce(out, st, c.reduce.size());
    out.add(assign_node(local_place(st.acc), expr_operand(g.body), c.op, st.computed));
    out.close(c.reduce.size());
  }
  Node store = assign_node(st.target, load(local_place(st.acc)), ir::ReduceOp::None, st.computed);
  store.round_double = st.wide;
  out.add(std::move(store));
  st.ctx = outside;
}

void LoopBuilder::in_place_block(Cursor& out, StatementState& st) {
  // Out indices inside the reduction: start the block, then accumulate in
  // place; every element still sums in the reduce indices' order. (Never
  // for float16, which would round at every step: passes/schedule.cpp.)
  const ir::Compute& c = st.c;
  const std::vector<size_t>& inner = st.m.schedule.inner;
  TENET_ASSERT(st.type != ElemType::F16, "in-place accumulation into float16 " << c.result->name);
  open_out(out, st, inner, 0);
  out.add(assign_node(st.target, st.start, ir::ReduceOp::None, st.computed));
  out.close(inner.size());
  open_reduce(out, st, c.reduce.size());
  hoist_computed_indices(out, st.m.guard.body, c, inner, st.ctx);
  open_out(out, st, inner, 0);
  out.add(assign_node(st.target, expr_operand(st.m.guard.body), c.op, st.type));
  out.close(inner.size() + c.reduce.size());
  out.close(st.own_outer);
}

LoopBuilder::BlockShape LoopBuilder::block_shape(const StatementState& st) const {
  // The element's offset in the block: the first inner index's term (added
  // by the caller), then each other inner index times the extents inside it.
  const ir::Compute& c = st.c;
  const std::vector<size_t>& inner = st.m.schedule.inner;
  BlockShape shape;
  for (size_t k = inner.size(); k-- > 1;) {
    const size_t d = inner[k];
    const std::optional<int64_t> extent = c.out[d].extent().constant();
    TENET_ASSERT(extent,
                 "block of double accumulators over a symbolic extent in " << c.result->name);
    IndexExpr term = ix::var(st.out_vars[d]);
    if (shape.rest != 1) term = ix::binary(IndexKind::Mul, term, ix::constant(shape.rest));
    shape.offsets.insert(shape.offsets.begin(), term);
    shape.rest *= *extent;
  }
  // With no loop outside (a column sum: schedule.h), wide blocks are cut
  // into at most 8 tiles of columns that threads share: each element is
  // still summed in order by one thread. A symbolic first extent is tiled
  // to at most kMaxInnerBlock elements.
  const std::optional<int64_t> first = c.out[inner[0]].extent().constant();
  constexpr int64_t kMinColumns = 64;
  shape.columns = first && st.m.schedule.outer.empty() && !st.in_nest &&
                  *first >= 2 * kMinColumns && options_.parallel;
  shape.tile = shape.columns ? std::max(kMinColumns, (*first + 127) / 128 * 16)
               : first       ? *first
                             : std::max<int64_t>(1, passes::kMaxInnerBlock / shape.rest);
  shape.tiled = !first || shape.columns;
  return shape;
}

void LoopBuilder::wide_block(Cursor& out, StatementState& st) {
  // Out indices inside the reduction, accumulated in a block of doubles on
  // the stack, then rounded into the result. Only the first inner index may
  // have a symbolic extent (passes/schedule.cpp); the block then holds a
  // tile of its values at a time.
  const ir::Compute& c = st.c;
  const std::vector<size_t>& inner = st.m.schedule.inner;
  const size_t first = inner[0];
  BlockShape shape = block_shape(st);
  std::vector<IndexExpr>& offsets = shape.offsets;
  const int64_t rest = shape.rest, tile = shape.tile;
  const bool columns = shape.columns, tiled = shape.tiled;
  const Var tile_start = tiled ? fresh(c.out[first].index + "_tile") : Var{};
  const Var tile_end = tiled ? fresh(c.out[first].index + "_tile_end") : Var{};
  IndexExpr at_first = ix::var(st.out_vars[first]);
  if (tiled) at_first = ix::binary(IndexKind::Sub, at_first, ix::var(tile_start));
  offsets.insert(offsets.begin(),
                 rest == 1 ? at_first : ix::binary(IndexKind::Mul, at_first, ix::constant(rest)));
  IndexExpr offset = offsets[0];
  for (size_t k = 1; k < offsets.size(); ++k)
    offset = ix::binary(IndexKind::Add, offset, offsets[k]);
  const Place element = local_place(st.acc, offset);
  auto open_block = [&] {
    if (!tiled)
      out.open(
          for_node(st.out_vars[first], ix::constant(0), ix::extent(c.result.get(), int(first))));
    else
      out.open(for_node(st.out_vars[first], ix::var(tile_start), ix::var(tile_end)));
    open_out(out, st, inner, 1);
  };
  if (tiled) {
    Node loop = for_node(tile_start, ix::constant(0), ix::extent(c.result.get(), int(first)),
                         columns ? parallel_work({st.m}, true) : std::nullopt);
    loop.step = ix::constant(tile);
    out.open(std::move(loop));
    Node end;
    end.kind = NodeKind::Let;
    end.var = tile_end;
    end.index = ix::fold(IndexKind::Min,
                         {ix::binary(IndexKind::Add, ix::var(tile_start), ix::constant(tile)),
                          ix::extent(c.result.get(), int(first))});
    out.add(std::move(end));
  }
  Node block;
  block.kind = NodeKind::Array;
  block.var = st.acc;
  block.wide = true;
  block.count = tile * rest;
  out.add(std::move(block));
  open_block();
  out.add(assign_node(element, st.start, ir::ReduceOp::None, st.computed));
  out.close(inner.size());
  open_reduce(out, st, c.reduce.size());
  hoist_computed_indices(out, st.m.guard.body, c, inner, st.ctx);
  open_block();
  out.add(assign_node(element, expr_operand(st.m.guard.body), c.op, st.type));
  out.close(inner.size() + c.reduce.size());
  open_block();
  Node store = assign_node(st.target, load(element), ir::ReduceOp::None, st.computed);
  store.round_double = true;
  out.add(std::move(store));
  out.close(inner.size() + (tiled ? 1 : 0));
  out.close(st.own_outer);
}

}  // namespace tenet::lower::detail
