// Values hoisted above the loops they do not depend on: computed indices
// (checked once per row) and loop-invariant reads (loop_builder.h).
#include <map>
#include <set>
#include <string>

#include "ir/mutator.h"
#include "ir/printer.h"
#include "lower/loop_builder.h"

namespace tenet::lower::detail {

void LoopBuilder::hoist_computed_indices(Cursor& out, const ir::Expr& body, const ir::Compute& c,
                                         const std::vector<size_t>& inner_dims, Context& ctx) {
  // A gather's row (W(I(b, l), d) with d inner) is found and checked once
  // per row, not per element: the inner loop stays a plain, vectorisable copy.
  std::set<std::string> inner_names;
  std::vector<std::pair<std::string, ir::SizeExpr>> not_open;
  for (size_t d : inner_dims) {
    inner_names.insert(c.out[d].index);
    not_open.push_back({c.out[d].index, c.out[d].lo});
  }
  ir::for_each_node(body, [&](const ir::Expr& e) {
    if (e->kind != ir::ExprKind::Read) return;
    for (size_t d = 0; d < e->computed.size(); ++d) {
      if (!e->computed[d] || ctx.hoisted_indices.count({e.get(), d})) continue;
      if (ir::mentions_index(e->computed[d], inner_names)) continue;
      Node let;
      let.kind = NodeKind::Let;
      let.var = fresh("at_" + e->tensor->name);
      let.expr = e;
      let.computed_dim = int(d);
      let.not_open = not_open;
      out.add(std::move(let));
      ctx.hoisted_indices.insert({e.get(), d});
    }
  });
}

void LoopBuilder::hoist_invariant_reads(Cursor& out, const ir::Expr& body,
                                        const std::vector<ir::Dim>& inner, Context& ctx,
                                        const ir::Stmt* stmt,
                                        const std::vector<Binding>& bindings) {
  std::set<std::string> inner_names;
  for (const ir::Dim& d : inner) {
    if (!ir::provably_le(d.lo + 1, d.hi)) return;  // might not run: load nothing early
    inner_names.insert(d.index);
  }
  if (inner_names.empty()) return;
  std::map<std::string, Var> loaded;  // the same element read twice: one local
  ir::for_each_node(body, [&](const ir::Expr& e) {
    if (e->kind != ir::ExprKind::Read || e->has_computed_index() ||
        ctx.hoisted_values.count(e.get()))
      return;
    for (const ir::Affine& a : e->indices)
      for (const auto& term : a.terms)
        if (inner_names.count(term.first)) return;
    const std::string text = ir::print(e);
    Node let;
    let.stmt = stmt;
    let.bindings = bindings;
    let.expr = e;
    ctx.hoisted_values.insert(e.get());
    if (auto same = loaded.find(text); same != loaded.end()) {
      let.kind = NodeKind::Alias;
      let.target.local = same->second;
      out.add(std::move(let));
      return;
    }
    // Statements of one loop nest are siblings: name the local after its statement.
    let.kind = NodeKind::Let;
    let.var =
        fresh(e->tensor->name + (ctx.statement_local_names ? "_for_" + ctx.statement : "_here"));
    let.type = compute_type(e->type);
    loaded[text] = let.var;
    out.add(std::move(let));
  });
}

Context LoopBuilder::hoist_above_shared_loop(Cursor& out, const std::vector<Scheduled>& nest,
                                             size_t first, size_t end,
                                             const std::vector<Var>& loop_vars,
                                             const Context& ctx) {
  // Only where the loop about to open is every member's last: element-wise
  // statements whose whole body runs inside it.
  const size_t depth = loop_vars.size();
  for (size_t k = first; k < end; ++k)
    if (nest[k].stmt->compute.op != ir::ReduceOp::None ||
        nest[k].schedule.outer.size() != depth + 1)
      return ctx;
  Context inside = ctx;
  for (size_t k = first; k < end; ++k) {
    const ir::Compute& c = nest[k].stmt->compute;
    const std::vector<size_t>& outer = nest[k].schedule.outer;
    Context member = ctx;
    std::vector<Binding> bindings;
    for (size_t p = 0; p < depth; ++p) {
      const ir::Dim& d = c.out[outer[p]];
      bindings.push_back(Binding{d.index, loop_vars[p], d.lo, d.hi});
      member.bind(bindings.back());
    }
    member.statement = c.result->name;
    member.statement_local_names = true;
    member.check_indices = checks_indices_of(*nest[k].stmt);
    hoist_invariant_reads(out, c.body, {c.out[outer[depth]]}, member, nest[k].stmt, bindings);
    for (const ir::ExprNode* node : member.hoisted_values) inside.hoisted_values.insert(node);
  }
  return inside;
}

}  // namespace tenet::lower::detail
