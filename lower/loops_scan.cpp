// A reduction over a triangle run as a scan. `y(b, i) +=! x(b, k) where k in
// 0:i + 1` narrows k's loop to [0, i + 1): run for every element, that is
// O(N^2) terms. When the terms do not depend on i, element i + 1 sums the
// terms of element i and those of the k it gains, so one accumulator runs on
// from element to element, each adding only the terms its bound moved over:
// O(N). A prefix (an upper bound of k rising with i: cumsum) keeps its
// order, bit for bit the sums of the loop it replaces; a suffix (a lower
// bound rising with i, the gradient of a prefix: d_x(k) +=! d_y(i) where i
// in k:N) walks i downwards and sums from the end of the range instead. An
// update (`init`, a gradient's later contribution) adds the scan's sum to
// its start at each element.
#include <algorithm>

#include "ir/affine.h"
#include "lower/loop_builder.h"
#include "passes/index_facts.h"
#include "support/error.h"

namespace tenet::lower::detail {

namespace {

/// `a` with `index` replaced by the value `at`.
ir::Affine substitute(ir::Affine a, const std::string& index, const ir::SizeExpr& at) {
  const int64_t coef = a.coef(index);
  std::erase_if(a.terms, [&](const auto& t) { return t.first == index; });
  a.offset = a.offset + ir::SizeExpr(coef) * at;
  return a;
}

ir::Affine shifted(ir::Affine a, int64_t by) {
  a.offset = a.offset + ir::SizeExpr(by);
  return a;
}

bool mentions(const ir::Expr& e, const ir::Dim& d) {
  return passes::detail::mentions_any(e, {d});
}

}  // namespace

std::optional<LoopBuilder::ScanPlan> LoopBuilder::scan_plan(const StatementState& st) const {
  const ir::Compute& c = st.c;
  const LoopSchedule& schedule = st.m.schedule;
  if (c.op == ir::ReduceOp::None || c.reduce.size() != 1 || !schedule.inner.empty() ||
      schedule.jam > 0 || schedule.lanes > 0 || st.m.peel || st.own_outer == 0 || st.group ||
      st.only[0])
    return std::nullopt;
  const size_t at = schedule.outer.back();
  const ir::Dim& scanned = c.out[at];
  const ReduceRange& range = st.m.guard.reduce[0];
  for (const auto* exprs : {&range.first, &range.end})
    for (const ir::Expr& e : *exprs)
      if (mentions(e, scanned)) return std::nullopt;
  // One bound of k moves with i, by a whole step; the others stay.
  std::optional<ScanPlan> plan;
  ReduceRange fixed;
  for (bool upper : {false, true})
    for (const LoopBound& b : upper ? range.upper : range.lower) {
      const int64_t a = b.numerator.coef(scanned.index);
      if (a == 0) {
        (upper ? fixed.upper : fixed.lower).push_back(b);
        continue;
      }
      if (plan || b.divisor != 1) return std::nullopt;
      plan = ScanPlan{at, upper, (a > 0) == upper, std::abs(a), b.numerator, {}, {}};
    }
  if (!plan) return std::nullopt;
  fixed.first = range.first;
  fixed.end = range.end;
  plan->fixed = std::move(fixed);
  // The terms must not depend on i (conditions i's range decides aside).
  passes::detail::IndexFacts facts;
  for (const ir::Dim& d : c.out) facts.add_range(d.index, d.lo, d.hi);
  for (const ir::Dim& d : c.reduce) facts.add_range(d.index, d.lo, d.hi);
  plan->body = passes::detail::refine(st.m.guard.body, facts);
  if (mentions(plan->body, scanned)) return std::nullopt;
  return plan;
}

Var LoopBuilder::scan_element(Cursor& out, StatementState& st) {
  // An update (a gradient's later contribution): its start, then the scan's terms.
  const ir::Compute& c = st.c;
  if (!c.init) return st.acc;
  const Var result = fresh("element", true);
  out.add(local_node(result, st.computed, st.wide, st.start));
  out.add(assign_node(local_place(result), load(local_place(st.acc)), c.op, st.computed));
  return result;
}

void LoopBuilder::scan(Cursor& out, StatementState& st, const ScanPlan& plan) {
  const ir::Compute& c = st.c;
  const LoopSchedule& schedule = st.m.schedule;
  const ir::Dim& scanned = c.out[plan.out_dim];
  const ir::Dim& k = c.reduce[0];
  std::optional<ParallelWork> work;
  if (!st.in_nest && schedule.outer.size() > 1) work = parallel_work({st.m});
  for (size_t q = st.shared; q + 1 < schedule.outer.size(); ++q) {
    const size_t d = schedule.outer[q];
    Node loop = for_node(st.out_vars[d], ix::constant(0), ix::extent(c.result.get(), int(d)),
                         q == st.shared ? work : std::nullopt);
    loop.independent = true;
    out.open(std::move(loop));
  }
  // With no loop of its own around it, the accumulator gets a scope.
  const bool scope = schedule.outer.size() == st.shared + 1;
  if (scope) {
    Node n;
    n.kind = NodeKind::Scope;
    out.open(std::move(n));
  }
  start_accumulator(st);
  Operand identity;  // an update's start is added per element (scan_element)
  identity.kind = Operand::Identity;
  identity.of = c.op;
  out.add(local_node(st.acc, st.computed, st.wide, identity));
  // The first element's terms but the last step's, then per element the
  // step its moving bound makes: [A(i) - a + 1, A(i)] below an upper bound
  // A(i), [B(i), B(i) + a - 1] above a lower one.
  const ir::SizeExpr first_i = plan.ascending ? scanned.lo : scanned.hi - ir::SizeExpr(1);
  const ir::Affine at_first = substitute(plan.moving, scanned.index, first_i);
  ReduceRange before = plan.fixed, step = plan.fixed;
  if (plan.upper) {
    before.upper.push_back({shifted(at_first, -plan.step), 1});
    step.upper.push_back({plan.moving, 1});
    step.lower.push_back({shifted(plan.moving, 1 - plan.step), 1});
  } else {
    before.lower.push_back({shifted(at_first, plan.step), 1});
    step.lower.push_back({plan.moving, 1});
    step.upper.push_back({shifted(plan.moving, plan.step - 1), 1});
  }
  out.note(std::string("A scan over ") + scanned.index + " (" +
           (plan.ascending ? "upwards" : "downwards") + "): the accumulator runs on from one " +
           "element to the next, each adding the terms of " + k.index + " it gains.");
  auto terms = [&](const ReduceRange& range) {
    out.open(for_node(st.reduce_vars[0], loop_start(k, range, st.ctx.ranges),
                      loop_end(k, range, st.ctx.ranges)));
    out.add(assign_node(local_place(st.acc), expr_operand(plan.body), c.op, st.computed));
    out.close();
  };
  // (None for a prefix from the start or a suffix to the end: cumsum.)
  const bool none_before =
      at_first.terms.empty() &&
      (plan.upper
           ? ir::provably_le(at_first.offset - ir::SizeExpr(plan.step), k.lo - ir::SizeExpr(1))
           : ir::provably_le(k.hi, at_first.offset + ir::SizeExpr(plan.step)));
  if (!none_before) terms(before);
  Node loop = for_node(st.out_vars[plan.out_dim], ix::constant(0),
                       ix::extent(c.result.get(), int(plan.out_dim)));
  loop.reverse = !plan.ascending;  // each element reads what the one before it summed
  out.open(std::move(loop));
  terms(step);
  const Var result = scan_element(out, st);
  Node store = assign_node(st.target, load(local_place(result)), ir::ReduceOp::None, st.computed);
  store.round_double = st.wide;
  out.add(std::move(store));
  out.close(st.own_outer + (scope ? 1 : 0));
}

}  // namespace tenet::lower::detail
