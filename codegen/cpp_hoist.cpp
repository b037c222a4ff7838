// Values hoisted above the loops they do not depend on: computed indices
// (checked once per row) and loop-invariant reads (function_emitter.h).
#include <map>
#include <set>
#include <string>

#include "codegen/function_emitter.h"
#include "ir/mutator.h"

namespace tenet::codegen::detail {

void FunctionEmitter::hoist_computed_indices(Code& code, const ir::Expr& body, const ir::Compute& c,
                                             const std::vector<size_t>& inner_dims, Namer& local,
                                             Scope& scope) const {
  // A gather's row (W(I(b, l), d) with d inner) is found and checked once
  // per row, not per element: the inner loop stays a plain, vectorisable copy.
  std::set<std::string> inner_names;
  for (size_t d : inner_dims) {
    inner_names.insert(c.out[d].index);
    scope.not_open[c.out[d].index] = size_to_c(c.out[d].lo, size_names_).text;
  }
  ir::for_each_node(body, [&](const ir::Expr& e) {
    if (e->kind != ir::ExprKind::Read) return;
    for (size_t d = 0; d < e->computed.size(); ++d) {
      if (!e->computed[d] || scope.hoisted.count({e.get(), d})) continue;
      if (ir::mentions_index(e->computed[d], inner_names)) continue;
      const std::string var = local.take("at_" + e->tensor->name);
      code.line("const int64_t " + var + " = " + computed_index_to_c(*e, d, scope).text + ";");
      scope.hoisted[{e.get(), d}] = var;
    }
  });
  scope.not_open.clear();
}

void FunctionEmitter::hoist_invariant_reads(Code& code, const ir::Expr& body,
                                            const std::vector<ir::Dim>& inner, Namer& local,
                                            Scope& scope) const {
  std::set<std::string> inner_names;
  for (const ir::Dim& d : inner) {
    if (!ir::provably_le(d.lo + 1, d.hi)) return;  // might not run: load nothing early
    inner_names.insert(d.index);
  }
  if (inner_names.empty()) return;
  std::map<std::string, std::string> loaded;  // the same element read twice: one local
  ir::for_each_node(body, [&](const ir::Expr& e) {
    if (e->kind != ir::ExprKind::Read || e->has_computed_index() ||
        scope.hoisted_values.count(e.get()))
      return;
    for (const ir::Affine& a : e->indices)
      for (const auto& term : a.terms)
        if (inner_names.count(term.first)) return;
    const CExpr value = emit_expr(e, scope);
    if (auto same = loaded.find(value.text); same != loaded.end()) {
      scope.hoisted_values[e.get()] = same->second;
      return;
    }
    // Statements of one loop nest are siblings: name the local after its statement.
    const std::string var = local.take(
        e->tensor->name + (scope.statement_local_names ? "_for_" + scope.statement : "_here"));
    loaded[value.text] = var;
    code.line("const " + std::string(c_type_name(compute_type(e->type))) + " " + var + " = " +
              value.text + ";");
    scope.hoisted_values[e.get()] = var;
  });
}

Scope FunctionEmitter::hoist_above_shared_loop(Code& code, const std::vector<Scheduled>& nest,
                                               size_t first, size_t end,
                                               const std::vector<std::string>& loop_vars,
                                               const Scope& scope, Namer& names) const {
  // Only where the loop about to open is every member's last: element-wise
  // statements whose whole body runs inside it.
  const size_t depth = loop_vars.size();
  for (size_t k = first; k < end; ++k)
    if (nest[k].stmt->compute.op != ir::ReduceOp::None ||
        nest[k].schedule.outer.size() != depth + 1)
      return scope;
  Scope inside = scope;
  for (size_t k = first; k < end; ++k) {
    const ir::Compute& c = nest[k].stmt->compute;
    const std::vector<size_t>& outer = nest[k].schedule.outer;
    Scope member = scope;
    for (size_t p = 0; p < depth; ++p)
      member.bind(c.out[outer[p]].index, loop_vars[p], c.out[outer[p]].lo, c.out[outer[p]].hi);
    member.statement = c.result->name;
    member.statement_local_names = true;
    member.check_indices = checks_indices_of(*nest[k].stmt, scope);
    hoist_invariant_reads(code, c.body, {c.out[outer[depth]]}, names, member);
    for (const auto& [node, name] : member.hoisted_values) inside.hoisted_values[node] = name;
  }
  return inside;
}

}  // namespace tenet::codegen::detail
