#include "lower/scatter.h"

#include <set>
#include <string>

#include "ir/builder.h"
#include "ir/mutator.h"
#include "lower/lowered.h"

namespace tenet::lower {

namespace {

/// The conjuncts of an `and` tree, left to right.
void conjuncts(const ir::Expr& e, std::vector<ir::Expr>& out) {
  if (e->kind == ir::ExprKind::Binary && e->binop == ir::BinOp::And) {
    conjuncts(e->args[0], out);
    conjuncts(e->args[1], out);
    return;
  }
  out.push_back(e);
}

bool is_zero(const ir::Expr& e) {
  return e->kind == ir::ExprKind::Const && e->value == 0;
}

}  // namespace

std::optional<IndexScatter> index_scatter(const ir::Compute& c) {
  if (c.op != ir::ReduceOp::Sum || c.reduce.empty() || c.out.empty()) return std::nullopt;
  const ir::Expr& body = c.body;
  if (body->kind != ir::ExprKind::Select || !is_zero(body->args[2])) return std::nullopt;
  std::vector<ir::Expr> terms;
  conjuncts(body->args[0], terms);

  // Each out index y with a conjunct y == E (E reading a tensor): a target.
  std::vector<ir::Expr> index_of(c.out.size());
  std::vector<bool> used(terms.size(), false);
  for (size_t t = 0; t < terms.size(); ++t) {
    const ir::Expr& e = terms[t];
    if (e->kind != ir::ExprKind::Binary || e->binop != ir::BinOp::Eq) continue;
    for (int side = 0; side < 2; ++side) {
      const ir::Expr& y = e->args[size_t(side)];
      const ir::Expr& value = e->args[size_t(1 - side)];
      if (y->kind != ir::ExprKind::Index || ir::reads_of(value).empty()) continue;
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
  for (size_t d = 0; d < c.out.size(); ++d) {
    if (index_of[d])
      scattered.insert(c.out[d].index);
    else
      out.free.push_back(d);
  }
  if (scattered.empty()) return std::nullopt;
  // A target is computed once per term, outside the loops over the free out
  // indices: one that reads a free (or scattered) index stays a reduction.
  std::set<std::string> own;
  for (const ir::Dim& d : c.out) own.insert(d.index);
  for (size_t d = 0; d < c.out.size(); ++d) {
    if (!index_of[d]) continue;
    if (ir::mentions_index(index_of[d], own)) return std::nullopt;
    out.targets.push_back({d, index_of[d]});
  }
  for (size_t t = 0; t < terms.size(); ++t)
    if (!used[t])
      out.condition =
          out.condition ? ir::make_binary(ir::BinOp::And, out.condition, terms[t]) : terms[t];
  out.value = body->args[1];
  return out;
}

void lower_scatters(LoweredFunction& f) {
  ir::for_each_stmt(f.function->body, [&](const ir::Stmt& s) {
    if (s.kind != ir::StmtKind::Compute || f.gemms.count(&s) || !f.liveness.live(s.compute)) return;
    if (auto form = index_scatter(s.compute)) f.scatters.emplace(&s, std::move(*form));
  });
}

}  // namespace tenet::lower
