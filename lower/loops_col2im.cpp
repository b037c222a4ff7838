// The gather of a split statement (col2im) as a scatter of contiguous
// windows, in the form lower/col2im.h found: the free loops (parallel: each
// thread owns whole slices of the result), the slice started from the init,
// then per term each window's bounds once and the window added.
#include "ir/affine.h"
#include "lower/loop_builder.h"

namespace tenet::lower::detail {

namespace {

std::string free_names(const ScatterForm& form) {
  std::string names;
  for (const ir::Dim& d : form.free) names += (names.empty() ? "" : ", ") + d.index;
  return names.empty() ? std::string("call") : names;
}

/// A name scope that continues its enclosing one (names taken inside may be
/// taken again after it), binding `bindings`.
Node inner_names(std::vector<Binding> bindings) {
  Node n;
  n.kind = NodeKind::NameScope;
  n.inherit_names = true;
  for (const Binding& b : bindings) n.declares.push_back(b.var);
  n.bindings = std::move(bindings);
  return n;
}

}  // namespace

void LoopBuilder::col2im(Cursor& out, const ir::Stmt& s, const ScatterForm& form,
                         const Context& ctx) {
  const ir::Compute& c = s.compute;
  const ir::ExprNode& read = *c.body;
  Node region = statement_region(s, ctx.check_indices);
  const std::vector<Var> free_vars = bind_fresh(region, form.free);
  const std::vector<Var> reduce_vars = bind_fresh(region, c.reduce);
  out.open(std::move(region));
  out.note("As a scatter: per " + free_names(form) + ", the result starts from " +
           (c.init ? c.init->name : std::string("0")) + " and each term adds a window of " +
           read.tensor->name +
           ", in the order of the sum, so every element sums its terms in that order.");
  // The free loops, parallel when the whole statement is worth the team.
  std::optional<ParallelWork> work;
  if (options_.parallel && !form.free.empty()) {
    std::vector<ir::Dim> all = c.out;
    all.insert(all.end(), c.reduce.begin(), c.reduce.end());
    work = ParallelWork{};
    work->min_work = options_.parallel_min_work;
    work->literal = true;
    work->collapse = int(form.free.size());
    ParallelWork::Term term;
    for (const ir::Dim& d : all) {
      if (auto k = d.extent().constant())
        term.constant *= *k;
      else
        term.factors.push_back({ix::size(d.extent())});
    }
    work->terms.push_back(std::move(term));
  }
  for (size_t i = 0; i < form.free.size(); ++i)
    out.open(for_node(free_vars[i], ix::constant(0), ix::size(form.free[i].extent()),
                      i == 0 ? work : std::nullopt));
  col2im_start(out, c, form);
  col2im_terms(out, c, form, reduce_vars);
  out.close(form.free.size() + 1);
}

void LoopBuilder::col2im_start(Cursor& out, const ir::Compute& c, const ScatterForm& form) {
  // The result's slice starts from the init, or from 0.
  std::vector<Binding> window_out;
  for (const WindowDim& w : form.windows)
    for (const ir::Dim& d : c.out)
      if (d.index == w.out) window_out.push_back(Binding{d.index, fresh(d.index), d.lo, d.hi});
  out.open(inner_names(window_out));
  for (size_t i = 0; i < window_out.size(); ++i)
    out.open(for_node(window_out[i].var, ix::constant(0),
                      ix::size(window_out[i].hi - window_out[i].lo)));
  const Place result{c.result.get(), ir::plain_indices(c.out), {}, nullptr};
  Operand start;
  start.kind = Operand::Identity;
  start.of = ir::ReduceOp::Sum;
  if (c.init) start = load(Place{c.init.get(), result.indices, {}, nullptr});
  out.add(assign_node(result, start, ir::ReduceOp::None, c.result->type));
  out.close(window_out.size() + 1);
}

void LoopBuilder::col2im_terms(Cursor& out, const ir::Compute& c, const ScatterForm& form,
                               const std::vector<Var>& reduce_vars) {
  // The terms, in the gather's order; per term, each window's bounds once:
  // window = out + shift, 0 <= window < the columns' extent, 0 <= out < the out extent.
  const ir::ExprNode& read = *c.body;
  for (size_t r = 0; r < c.reduce.size(); ++r)
    out.open(for_node(reduce_vars[r], ix::constant(0), ix::size(c.reduce[r].extent())));
  std::vector<ir::Affine> cols_at = read.indices, result_at = ir::plain_indices(c.out);
  std::vector<Binding> windows;
  std::vector<std::pair<Var, Var>> bounds_of;  // per window: its first and end
  for (const WindowDim& w : form.windows) {
    const Var lo = fresh("k_" + w.out + "_lo"), hi = fresh("k_" + w.out + "_hi");
    ir::SizeExpr out_extent;
    for (const ir::Dim& d : c.out)
      if (d.index == w.out) out_extent = d.extent();
    Node bounds = let_index(lo, ix::fold(IndexKind::Max, {ix::constant(0), ix::affine(w.shift)}));
    const IndexExpr end = ix::binary(IndexKind::Sub, ix::size(out_extent), ix::affine(-w.shift));
    bounds.more = {
        {hi, ix::fold(IndexKind::Min, {ix::extent(read.tensor.get(), w.cols_dim), end})}};
    out.add(std::move(bounds));
    const std::string key = "window of " + w.out;  // a space: no IR index has this name
    windows.push_back(Binding{key, fresh("k_" + w.out), 0, 0});
    cols_at[size_t(w.cols_dim)] = ir::Affine::var(key);
    for (size_t d = 0; d < c.out.size(); ++d)
      if (c.out[d].index == w.out) result_at[d] = ir::Affine::var(key) - w.shift;
    bounds_of.push_back({lo, hi});
  }
  out.open(inner_names(windows));
  for (size_t i = 0; i < windows.size(); ++i)
    out.open(for_node(windows[i].var, ix::var(bounds_of[i].first), ix::var(bounds_of[i].second)));
  out.add(assign_node(Place{c.result.get(), result_at, {}, nullptr},
                      load(Place{read.tensor.get(), cols_at, {}, nullptr}), ir::ReduceOp::Sum,
                      c.result->type));
  out.close(windows.size() + 1 + c.reduce.size());
}

}  // namespace tenet::lower::detail
