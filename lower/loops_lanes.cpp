// A max, min or float32 sum reduction in vector lanes (passes/schedule.h, 4):
// its last reduce loop by blocks of partial accumulators, combined at the end.
#include <string>

#include "lower/loop_builder.h"

namespace tenet::lower::detail {

namespace {

/// The locals of a reduction in lanes: the lanes and a lane's index; the
/// range of the last reduce loop, where its blocks of lanes end, a block's start.
struct LaneVars {
  Var lanes, lane, first, end, split, block;
};

Node lane_loop(const LaneVars& v, int64_t n, LoopKind kind) {
  Node loop;
  loop.kind = NodeKind::For;
  loop.var = v.lane;
  loop.first = ix::constant(0);
  loop.end = ix::constant(n);
  loop.loop_kind = kind;
  loop.unroll = kind == LoopKind::Unrolled ? n : 0;
  return loop;
}

}  // namespace

void LoopBuilder::lanes(Cursor& out, StatementState& st, const GuardBounds& g) {
  const ir::Compute& c = st.c;
  const bool sum = c.op == ir::ReduceOp::Sum;  // a float32 sum: lanes of doubles
  const size_t outer = c.reduce.size() - 1;    // reduce loops around the lanes
  const int64_t n = st.m.schedule.lanes;
  const std::string& index = c.reduce.back().index;
  LaneVars v{fresh(index + "_lanes"), fresh(index + "_lane"),  fresh(index + "_first"),
             fresh(index + "_end"),   fresh(index + "_split"), fresh(index + "_block")};
  const std::pair<IndexExpr, IndexExpr> bounds = reduce_bounds(st, outer);
  const Place at_lane = local_place(v.lanes, ix::var(v.lane));
  out.note("In " + std::to_string(n) +
           (sum ? " lanes of partial sums in double, added in the language's order "
                  "(tenet::sum_lanes); the lanes are contiguous loads."
                : " lanes: max and min give the same bits in any order (maximumNumber), and "
                  "the lanes are contiguous loads."));
  Node scope;  // siblings in a nest may have lanes of their own
  scope.kind = NodeKind::Scope;
  out.open(std::move(scope));
  out.add(array_node(v.lanes, st.computed, sum, n));
  out.open(lane_loop(v, n, LoopKind::Unrolled));
  Operand start;
  start.kind = sum ? Operand::Zero : Operand::Identity;
  start.of = c.op;
  out.add(assign_node(at_lane, start, ir::ReduceOp::None, st.computed));
  out.close();
  open_reduce(out, st, outer);
  Node range = let_index(v.first, bounds.first);
  range.more = {{v.end, bounds.second}};
  out.add(std::move(range));
  // first + max(0, end - first) / n * n: where the blocks of whole lanes end.
  const IndexExpr length =
      ix::fold(IndexKind::Max,
               {ix::constant(0), ix::binary(IndexKind::Sub, ix::var(v.end), ix::var(v.first))});
  out.add(let_index(
      v.split,
      ix::binary(IndexKind::Add, ix::var(v.first),
                 ix::binary(IndexKind::Mul, ix::binary(IndexKind::Div, length, ix::constant(n)),
                            ix::constant(n)))));
  Node blocks = for_node(v.block, ix::var(v.first), ix::var(v.split));
  blocks.step = ix::constant(n);
  out.open(std::move(blocks));
  // Left to the loop vectoriser (not unrolled): it turns the compare-and-blend
  // of math::max into vector masks, which GCC's SLP does not.
  out.open(lane_loop(v, n, LoopKind::Vectorized));
  out.add(let_index(st.reduce_vars.back(),
                    ix::binary(IndexKind::Add, ix::var(v.block), ix::var(v.lane))));
  out.add(assign_node(at_lane, expr_operand(g.body), c.op, st.computed));
  out.close(2);
  out.open(for_node(st.reduce_vars.back(), ix::var(v.split), ix::var(v.end)));
  out.add(assign_node(local_place(st.acc), expr_operand(g.body), c.op, st.computed));
  out.close(1 + outer);
  Operand fold;
  fold.kind = Operand::Fold;
  fold.of = c.op;
  fold.place.local = v.lanes;
  fold.lanes = n;
  out.add(assign_node(local_place(st.acc), fold, c.op, st.computed));
  out.close();
}

}  // namespace tenet::lower::detail
