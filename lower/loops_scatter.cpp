// A sum run as a scatter (lower/scatter.h): the result starts from init (or
// its identity), then every contribution adds into the element its computed
// index selects. Threads split the first free out index into blocks of
// columns; each thread walks every contribution, in the reduce indices'
// order, for its own columns, so every element sums its terms in the loop
// nest's order. Out indices a target mentions (outer) loop outside the
// contributions, and threads split the first of them instead: each slice has
// its own elements.
#include "ir/affine.h"
#include "lower/loop_builder.h"
#include "lower/scatter.h"

namespace tenet::lower::detail {

namespace {

/// Columns of the first free out index per block of a scatter's work: two
/// cache lines of floats, so that a block's rows are whole lines.
constexpr int64_t kScatterBlock = 32;

}  // namespace

std::optional<ParallelWork> LoopBuilder::literal_work(std::vector<IndexExpr> factors) const {
  if (!options_.parallel) return std::nullopt;
  ParallelWork work;
  work.min_work = options_.parallel_min_work;
  work.literal = true;
  ParallelWork::Term term;
  for (IndexExpr& f : factors) term.factors.push_back({std::move(f)});
  work.terms.push_back(std::move(term));
  return work;
}

void LoopBuilder::scatter(Cursor& out, const ir::Stmt& s, const Context& ctx) {
  const ir::Compute& c = s.compute;
  const IndexScatter& lowered = lowered_.scatters.at(&s);
  // Reduce loops narrowed by the mask's other conditions where they can be
  // (a ragged range: k in start(b):end(b)), as for any reduction.
  std::vector<std::string> loop_order;
  IndexRanges ranges = ctx.ranges;
  for (size_t d : lowered.outer) loop_order.push_back(c.out[d].index);
  for (const ir::Dim& d : c.reduce) loop_order.push_back(d.index);
  for (size_t d : lowered.free) loop_order.push_back(c.out[d].index);
  for (const auto* dims : {&c.out, &c.reduce})
    for (const ir::Dim& d : *dims) ranges[d.index] = IndexRange{d.lo, d.hi};
  const GuardBounds guard = infer_guard_bounds(c, loop_order, ranges);
  ir::Compute narrowed = c;
  narrowed.body = guard.body;
  const std::optional<IndexScatter> rest = index_scatter(narrowed);
  const IndexScatter& form = rest ? *rest : lowered;

  Node region = statement_region(s, ctx.check_indices);
  const std::vector<Var> out_vars = bind_fresh(region, c.out);
  const std::vector<Var> reduce_vars = bind_fresh(region, c.reduce);
  out.open(std::move(region));
  std::string order;
  for (const ir::Dim& d : c.reduce) order += (order.empty() ? "" : ", ") + d.index;
  out.note(
      "As a scatter: each term adds into the element its index selects; every element "
      "sums its terms in the order of " +
      order + ", on any number of threads.");
  scatter_start(out, c, out_vars);
  scatter_terms(out, c, form, guard, rest.has_value(), out_vars, reduce_vars, ranges);
  out.close();
}

void LoopBuilder::scatter_start(Cursor& out, const ir::Compute& c, const std::vector<Var>& vars) {
  // The start: init, or the identity.
  std::vector<IndexExpr> count;
  for (size_t d = 0; d < c.out.size(); ++d) count.push_back(ix::extent(c.result.get(), int(d)));
  const Place target{c.result.get(), ir::plain_indices(c.out), {}, nullptr};
  Operand start;
  start.kind = Operand::Identity;
  start.of = c.op;
  if (c.init) start = load(Place{c.init.get(), target.indices, {}, nullptr});
  for (size_t d = 0; d < c.out.size(); ++d) {
    Node loop = for_node(vars[d], ix::constant(0), ix::extent(c.result.get(), int(d)),
                         d == 0 ? literal_work(count) : std::nullopt);
    loop.independent = true;
    out.open(std::move(loop));
  }
  out.add(assign_node(target, start, ir::ReduceOp::None, c.result->type));
  out.close(c.out.size());
}

void LoopBuilder::scatter_terms(Cursor& out, const ir::Compute& c, const IndexScatter& form,
                                const GuardBounds& guard, bool narrowed,
                                const std::vector<Var>& out_vars,
                                const std::vector<Var>& reduce_vars, const IndexRanges& ranges) {
  std::vector<IndexExpr> work;
  for (const ir::Dim& d : c.reduce) work.push_back(ix::size(d.hi - d.lo));
  for (size_t d : form.outer) work.push_back(ix::extent(c.result.get(), int(d)));
  for (size_t d : form.free) work.push_back(ix::extent(c.result.get(), int(d)));
  for (size_t k = 0; k < form.outer.size(); ++k) {
    const size_t d = form.outer[k];
    Node loop = for_node(out_vars[d], ix::constant(0), ix::extent(c.result.get(), int(d)),
                         k == 0 ? literal_work(work) : std::nullopt);
    loop.independent = true;  // the targets name it as it is: its elements are its own
    out.open(std::move(loop));
  }
  const bool blocked = form.outer.empty() && !form.free.empty();
  Var block, block_end;
  if (blocked) {
    const size_t first = form.free[0];
    block = fresh(c.out[first].index + "_block");
    block_end = fresh(c.out[first].index + "_end");
    Node loop = for_node(block, ix::constant(0), ix::extent(c.result.get(), int(first)),
                         literal_work(work));
    loop.step = ix::constant(kScatterBlock);
    out.open(std::move(loop));
    out.add(
        let_index(block_end, ix::fold(IndexKind::Min, {ix::binary(IndexKind::Add, ix::var(block),
                                                                  ix::constant(kScatterBlock)),
                                                       ix::extent(c.result.get(), int(first))})));
  }
  for (size_t r = 0; r < c.reduce.size(); ++r) {
    const ir::Dim& d = c.reduce[r];
    const ReduceRange range = narrowed ? guard.reduce[r] : ReduceRange{};
    if (range.narrowed())
      out.open(for_node(reduce_vars[r], loop_start(d, range, ranges), loop_end(d, range, ranges)));
    else
      out.open(for_node(reduce_vars[r], ix::size(d.lo), ix::size(d.hi)));
  }
  for (const ScatterTarget& t : form.targets) {
    out.add(let_index(out_vars[t.dim], ix::value(t.index)));
    Node skip;  // no element: the mask never holds
    skip.kind = NodeKind::SkipUnlessInBounds;
    skip.var = out_vars[t.dim];
    skip.index = ix::extent(c.result.get(), int(t.dim));
    out.add(std::move(skip));
  }
  for (size_t k = 0; k < form.free.size(); ++k) {
    const size_t d = form.free[k];
    Node loop = k == 0 && blocked
                    ? for_node(out_vars[d], ix::var(block), ix::var(block_end))
                    : for_node(out_vars[d], ix::constant(0), ix::extent(c.result.get(), int(d)));
    // The innermost loop adds one contribution to distinct elements: no
    // dependence between its iterations (the outlined parallel region would
    // otherwise hide that the result and the operands do not overlap).
    if (k + 1 == form.free.size() && options_.parallel) loop.loop_kind = LoopKind::Simd;
    out.open(std::move(loop));
  }
  Node step = assign_node(Place{c.result.get(), ir::plain_indices(c.out), {}, nullptr},
                          expr_operand(form.value), c.op, c.result->type);
  if (form.condition) {
    Node test;
    test.kind = NodeKind::If;
    test.condition = form.condition;
    test.body.push_back(std::move(step));
    out.add(std::move(test));
  } else {
    out.add(std::move(step));
  }
  out.close(form.free.size() + c.reduce.size() + (blocked ? 1 : 0) + form.outer.size());
}

}  // namespace tenet::lower::detail
