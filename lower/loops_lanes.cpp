// A max, min or float32 sum reduction in vector lanes (passes/schedule.h, 4):
// its last reduce loop by blocks of partial accumulators, combined at the end.
#include <string>

#include "lower/loop_builder.h"

namespace tenet::lower::detail {

void LoopBuilder::lanes(Cursor& out, StatementState& st, const GuardBounds& g) {
  const ir::Compute& c = st.c;
  const bool sum = c.op == ir::ReduceOp::Sum;  // a float32 sum: lanes of doubles
  const size_t outer = c.reduce.size() - 1;    // reduce loops around the lanes
  const int64_t n = st.m.schedule.lanes;
  const std::string& index = c.reduce.back().index;
  const Var var = st.reduce_vars.back();
  const Var lanes = fresh(index + "_lanes"), lane = fresh(index + "_lane");
  const Var first = fresh(index + "_first"), end = fresh(index + "_end");
  const Var split = fresh(index + "_split"), block = fresh(index + "_block");
  const std::pair<IndexExpr, IndexExpr> bounds = reduce_bounds(st, outer);
  auto at_lane = [&] {
    Place p;
    p.local = lanes;
    p.at = ix::var(lane);
    return p;
  };
  auto assign = [&](Place target, Operand source, ir::ReduceOp op) {
    Node a;
    a.kind = NodeKind::Assign;
    a.target = std::move(target);
    a.source = std::move(source);
    a.op = op;
    a.compute = st.computed;
    return a;
  };
  Operand term;
  term.expr = g.body;
  if (sum)
    out.note("In " + std::to_string(n) +
             " lanes of partial sums in double, added in the language's order "
             "(tenet::sum_lanes); the lanes are contiguous loads.");
  else
    out.note("In " + std::to_string(n) +
             " lanes: max and min give the same bits in any order (maximumNumber), and the "
             "lanes are contiguous loads.");
  Node scope;  // siblings in a nest may have lanes of their own
  scope.kind = NodeKind::Scope;
  out.open(std::move(scope));
  Node array;
  array.kind = NodeKind::Array;
  array.var = lanes;
  array.type = st.computed;
  array.wide = sum;
  array.count = n;
  out.add(std::move(array));
  Node init = for_node(lane, ix::constant(0), ix::constant(n));
  init.loop_kind = LoopKind::Unrolled;
  init.unroll = n;
  out.open(std::move(init));
  Operand start;
  start.kind = sum ? Operand::Zero : Operand::Identity;
  start.of = c.op;
  out.add(assign(at_lane(), start, ir::ReduceOp::None));
  out.close();
  open_reduce(out, st, outer);
  Node range;
  range.kind = NodeKind::Let;
  range.var = first;
  range.index = bounds.first;
  range.more = {{end, bounds.second}};
  out.add(std::move(range));
  Node rest;
  rest.kind = NodeKind::Let;
  rest.var = split;
  const IndexExpr length = ix::fold(
      IndexKind::Max, {ix::constant(0), ix::binary(IndexKind::Sub, ix::var(end), ix::var(first))});
  rest.index =
      ix::binary(IndexKind::Add, ix::var(first),
                 ix::binary(IndexKind::Mul, ix::binary(IndexKind::Div, length, ix::constant(n)),
                            ix::constant(n)));
  out.add(std::move(rest));
  Node blocks = for_node(block, ix::var(first), ix::var(split));
  blocks.step = ix::constant(n);
  out.open(std::move(blocks));
  // Left to the loop vectoriser (not unrolled): it turns the compare-and-blend
  // of math::max into vector masks, which GCC's SLP does not.
  Node lane_loop = for_node(lane, ix::constant(0), ix::constant(n));
  lane_loop.loop_kind = LoopKind::Vectorized;
  out.open(std::move(lane_loop));
  Node at;
  at.kind = NodeKind::Let;
  at.var = var;
  at.index = ix::binary(IndexKind::Add, ix::var(block), ix::var(lane));
  out.add(std::move(at));
  out.add(assign(at_lane(), term, c.op));
  out.close(2);
  out.open(for_node(var, ix::var(split), ix::var(end)));
  Place acc;
  acc.local = st.acc;
  out.add(assign(acc, term, c.op));
  out.close();
  out.close(outer);
  Operand fold;
  fold.kind = Operand::Fold;
  fold.of = c.op;
  fold.place.local = lanes;
  fold.lanes = n;
  fold.zero_is_double = sum;
  out.add(assign(acc, fold, c.op));
  out.close();
}

}  // namespace tenet::lower::detail
