// The scatter form of a sum (scatter_form.h).
#include "ir/scatter_form.h"

#include <set>
#include <string>

#include "ir/builder.h"
#include "ir/mutator.h"

namespace tenet::ir {

namespace {

bool is_zero(const Expr& e) {
  return e->kind == ExprKind::Const && e->value == 0;
}

}  // namespace

std::optional<IndexScatter> index_scatter(const Compute& c) {
  if (c.op != ReduceOp::Sum || c.reduce.empty() || c.out.empty()) return std::nullopt;
  const Expr& body = c.body;
  if (body->kind != ExprKind::Select || !is_zero(body->args[2])) return std::nullopt;
  const std::vector<Expr> terms = conjuncts(body->args[0]);

  // Each out index y with a conjunct y == E (E reading a tensor): a target.
  std::vector<Expr> index_of(c.out.size());
  std::vector<bool> used(terms.size(), false);
  for (size_t t = 0; t < terms.size(); ++t) {
    const Expr& e = terms[t];
    if (e->kind != ExprKind::Binary || e->binop != BinOp::Eq) continue;
    for (int side = 0; side < 2; ++side) {
      const Expr& y = e->args[size_t(side)];
      const Expr& value = e->args[size_t(1 - side)];
      if (y->kind != ExprKind::Index || reads_of(value).empty()) continue;
      for (size_t d = 0; d < c.out.size(); ++d) {
        if (c.out[d].index != y->index || index_of[d]) continue;
        index_of[d] = value;
        used[t] = true;
        break;
      }
      if (used[t]) break;
    }
  }
  IndexScatter out;
  std::set<std::string> scattered;
  for (size_t d = 0; d < c.out.size(); ++d)
    if (index_of[d]) scattered.insert(c.out[d].index);
  if (scattered.empty()) return std::nullopt;
  // A target that reads a scattered index is no target; the other out
  // indices a target mentions loop outside the contributions (outer).
  for (size_t d = 0; d < c.out.size(); ++d) {
    if (!index_of[d]) continue;
    if (mentions_index(index_of[d], scattered)) return std::nullopt;
    out.targets.push_back({d, index_of[d]});
  }
  for (size_t d = 0; d < c.out.size(); ++d) {
    if (index_of[d]) continue;
    bool mentioned = false;
    for (const ScatterTarget& t : out.targets)
      mentioned = mentioned || mentions_index(t.index, {c.out[d].index});
    (mentioned ? out.outer : out.free).push_back(d);
  }
  for (size_t t = 0; t < terms.size(); ++t)
    if (!used[t])
      out.condition = out.condition ? make_binary(BinOp::And, out.condition, terms[t]) : terms[t];
  out.value = body->args[1];
  return out;
}

bool accumulates_in_double(const Compute& c) {
  return c.op == ReduceOp::Sum && c.result->type == ElemType::F32 && !c.reduce.empty() &&
         !index_scatter(c);
}

namespace {

/// Whether `index` is an operand of `e` as a value, outside every read: a
/// read's indices, computed ones too, are an address, data to a comparison.
bool index_as_value(const Expr& e, const std::string& index) {
  if (e->kind == ExprKind::Index) return e->index == index;
  if (e->kind == ExprKind::Read) return false;
  for (const Expr& a : e->args)
    if (index_as_value(a, index)) return true;
  return false;
}

}  // namespace

bool tests_index(const Expr& body, const std::string& index) {
  return any_node(body, [&](const Expr& e) {
    return e->kind == ExprKind::Binary && is_comparison(e->binop) && index_as_value(e, index);
  });
}

bool may_run_in_lanes(const Compute& c) {
  if (c.reduce.empty() || c.result->type == ElemType::Bool) return false;
  if (c.op == ReduceOp::Max || c.op == ReduceOp::Min) return true;
  // A sum's lanes count its last reduce index from the start of its range: no
  // test on that index may narrow its loop (lower/loop_bounds.h). A test of
  // data read at it (a ReLU mask, `x(l) > 0`) narrows nothing.
  const std::string& last = c.reduce.back().index;
  return accumulates_in_double(c) && !tests_index(c.body, last) &&
         !any_node(c.body, [&](const Expr& e) {
           return e->kind == ExprKind::Read && e->guarded && mentions_index(e, {last});
         });
}

}  // namespace tenet::ir
