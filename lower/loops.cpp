// The loop tree (loops.h): blocks as nests of statements, loops shared by
// the statements of a nest, the work that decides a parallel loop.
#include "lower/loops.h"

#include <algorithm>

#include "lower/index_range.h"
#include "lower/loop_builder.h"
#include "lower/nests.h"
#include "support/error.h"

namespace tenet::lower {

namespace detail {

void Cursor::note(const std::string& text) {
  Node n;
  n.kind = NodeKind::Note;
  n.text = text;
  add(std::move(n));
}

void Cursor::blank() {
  add(Node{});
}

}  // namespace detail

const Block& Node::nested_of(const ir::Stmt* s) const {
  for (const auto& [stmt, block] : nested)
    if (stmt == s) return block;
  TENET_UNREACHABLE("a library call without the loops of one of its statements");
}

namespace detail {

Node assign_node(Place target, Operand source, ir::ReduceOp op, ElemType compute) {
  Node n;
  n.kind = NodeKind::Assign;
  n.target = std::move(target);
  n.source = std::move(source);
  n.op = op;
  n.compute = compute;
  return n;
}

Node local_node(const Var& v, ElemType type, bool wide, Operand source) {
  Node n;
  n.kind = NodeKind::Let;
  n.var = v;
  n.type = type;
  n.wide = wide;
  n.source = std::move(source);
  return n;
}

Node array_node(const Var& v, ElemType type, bool wide, int64_t count) {
  Node n;
  n.kind = NodeKind::Array;
  n.var = v;
  n.type = type;
  n.wide = wide;
  n.count = count;
  return n;
}

Node let_index(const Var& v, IndexExpr value) {
  Node n;
  n.kind = NodeKind::Let;
  n.var = v;
  n.index = std::move(value);
  return n;
}

Place local_place(const Var& v, IndexExpr at) {
  Place p;
  p.local = v;
  p.at = std::move(at);
  return p;
}

Operand expr_operand(const ir::Expr& e) {
  Operand o;
  o.kind = Operand::Expr;
  o.expr = e;
  return o;
}

Node statement_region(const ir::Stmt& s, bool check) {
  Node n;
  n.kind = NodeKind::Statement;
  n.stmt = &s;
  n.check_indices = check;
  n.members = {&s.compute};
  return n;
}

Operand load(Place p) {
  Operand o;
  o.kind = Operand::Load;
  o.place = std::move(p);
  return o;
}

Var LoopBuilder::fresh(const std::string& hint, bool generated) {
  Var v;
  v.id = tree_.vars++;
  v.hint = hint;
  v.generated = generated;
  return v;
}

std::vector<Var> LoopBuilder::bind_fresh(Node& region, const std::vector<ir::Dim>& dims) {
  std::vector<Var> vars;
  for (const ir::Dim& d : dims) {
    vars.push_back(fresh(d.index));
    region.bindings.push_back(Binding{d.index, vars.back(), d.lo, d.hi});
  }
  return vars;
}

Node LoopBuilder::for_node(const Var& v, IndexExpr first, IndexExpr end,
                           std::optional<ParallelWork> work) {
  Node n;
  n.kind = NodeKind::For;
  n.var = v;
  n.first = std::move(first);
  n.end = std::move(end);
  if (work) {
    n.loop_kind = LoopKind::Parallel;
    n.parallel = std::move(work);
  }
  return n;
}

void LoopBuilder::block(Cursor& out, const std::vector<ir::Stmt>& body, const Context& ctx) {
  // Live statements in order, in nests of consecutive Computes that share loops.
  std::vector<std::vector<Scheduled>> nests;
  for (const std::vector<NestMember>& members : nests_of(body, lowered_)) {
    nests.emplace_back();
    for (const NestMember& member : members) {
      const ir::Stmt& s = *member.stmt;
      Scheduled m = runs_as_loops(s, lowered_) ? scheduled(s, ctx) : Scheduled{&s, {}, {}, {}, {}};
      m.schedule.shared = member.shared;
      nests.back().push_back(std::move(m));
    }
  }
  for (size_t i = 0; i < nests.size(); ++i) {
    if (i > 0) out.blank();
    const Scheduled& first = nests[i][0];
    const bool checked =
        first.stmt->kind == ir::StmtKind::Compute &&
        std::any_of(nests[i].begin(), nests[i].end(), [&](const Scheduled& m) {
          return has_checked_index(m.stmt->compute.body, checks_indices_of(*m.stmt));
        });
    if (checked) {
      tree_.checks_indices = true;
      for (const Scheduled& m : nests[i]) {
        Node check;
        check.kind = NodeKind::CheckNonEmpty;
        check.stmt = m.stmt;
        out.add(std::move(check));
      }
    }
    if (nests[i].size() > 1)
      nest(out, nests[i], ctx);
    else if (first.stmt->kind == ir::StmtKind::Compute)
      compute(out, *first.stmt, ctx);
    else
      carried_loop(out, *first.stmt, ctx);
    if (checked) {
      Node raise;
      raise.kind = NodeKind::RaiseIndexFault;
      out.add(std::move(raise));
    }
  }
}

void LoopBuilder::compute(Cursor& out, const ir::Stmt& s, const Context& ctx) {
  auto call = [&](CallKind kind) {
    Node n;
    n.kind = NodeKind::Call;
    n.call = kind;
    n.stmt = &s;
    out.add(std::move(n));
  };
  if (s.kind == ir::StmtKind::Compute && lowered_.memory.views.count(s.compute.result.get()))
    call(CallKind::View);
  else if (lowered_.gemms.count(&s))
    gemm(out, s, ctx);
  else if (lowered_.convs.count(&s))
    conv(out, s, ctx);
  else if (lowered_.scatters.count(&s))
    scatter(out, s, ctx);
  else
    loop_nest(out, s, ctx);
}

void LoopBuilder::carried_loop(Cursor& out, const ir::Stmt& s, const Context& ctx) {
  const ir::Loop& l = *s.loop;
  Node n;
  n.kind = NodeKind::CarriedLoop;
  n.stmt = &s;
  n.var = fresh(l.var);
  Context inner = ctx;
  inner.bind(Binding{l.var, n.var, 0, l.trip});
  Block& body = out.add(std::move(n)).body;
  Cursor in(body);
  block(in, l.body, inner);
}

void LoopBuilder::loop_nest(Cursor& out, const ir::Stmt& s, const Context& ctx) {
  Scheduled m = scheduled(s, ctx);
  m.schedule.shared = 0;
  nest(out, {m}, ctx);
}

Scheduled LoopBuilder::scheduled(const ir::Stmt& s, const Context& ctx) const {
  Scheduled m{&s, loop_schedule(s), {}, {}, {}};
  const ir::Compute& c = s.compute;
  std::vector<std::string> order;
  IndexRanges ranges = ctx.ranges;
  // A jammed loop runs inside the reduce loops: their bounds must not depend on it.
  const size_t jammed = m.schedule.jam > 0 ? 1 : 0;
  for (size_t q = 0; q + jammed < m.schedule.outer.size(); ++q)
    order.push_back(c.out[m.schedule.outer[q]].index);
  for (const ir::Dim& d : c.reduce) order.push_back(d.index);
  if (jammed) order.push_back(c.out.back().index);
  for (size_t p : m.schedule.inner) order.push_back(c.out[p].index);
  for (const auto* dims : {&c.out, &c.reduce})
    for (const ir::Dim& d : *dims) ranges[d.index] = IndexRange{d.lo, d.hi};
  m.guard = infer_guard_bounds(c, order, ranges);
  m.peel = border_peel(c, m.schedule);
  if (m.peel) {
    ir::Compute interior = c;
    interior.body = m.peel->interior;
    for (const passes::WindowBorder& l : m.peel->loops)
      ranges[c.out[l.dim].index] = IndexRange{ir::SizeExpr(l.lo), ir::SizeExpr(l.hi)};
    m.interior_guard = infer_guard_bounds(interior, order, ranges);
  }
  return m;
}

void LoopBuilder::nest(Cursor& out, const std::vector<Scheduled>& members, const Context& ctx) {
  const ir::Compute& head = members[0].stmt->compute;
  // No loop outside the reduction (a scalar, or every out index inside it):
  // a scope holds the accumulator.
  const bool scalar_block = members[0].schedule.outer.empty() && head.op != ir::ReduceOp::None;
  if (scalar_block) {
    Node scope;
    scope.kind = NodeKind::Scope;
    out.open(std::move(scope));
  }
  std::vector<Var> loop_vars;
  if (members.size() == 1) {
    statement(out, members[0], loop_vars, ctx, false);
  } else {
    std::string names;
    for (size_t i = 0; i < members.size(); ++i)
      names += std::string(i == 0                    ? ""
                           : i + 1 == members.size() ? " and "
                                                     : ", ") +
               members[i].stmt->compute.result->name;
    out.note(names +
             " share one loop nest: each reads from the others only what the current "
             "iteration of the shared loops computed.");
    shared(out, members, 0, members.size(), loop_vars, ctx);
  }
  if (scalar_block) out.close();
}

void LoopBuilder::shared(Cursor& out, const std::vector<Scheduled>& nest, size_t first, size_t end,
                         std::vector<Var>& loop_vars, const Context& ctx) {
  // Members [first, end) share the loops in loop_vars; group the runs of them
  // that also share the next loop.
  const size_t depth = loop_vars.size();
  bool blank = false;
  for (size_t i = first; i < end;) {
    size_t j = i + 1;
    while (j < end && nest[j].schedule.shared > depth) ++j;
    if (blank) out.blank();
    blank = true;
    if (j == i + 1) {
      statement(out, nest[i], loop_vars, ctx, true);
      i = j;
      continue;
    }
    if (nest[i].schedule.jam > 0 && depth + 1 == nest[i].schedule.outer.size()) {
      jam_run(out, nest, i, j, loop_vars, ctx);  // the shared loop is the jammed one
      i = j;
      continue;
    }
    // The shared loop: named and bounded after the run's first statement,
    // with a name none of the run's statements uses otherwise, nor an
    // enclosing shared loop (a statement's own `j` inside the shared loop
    // named after another's `j` read the inner one: wrong rows).
    const ir::Compute& c = nest[i].stmt->compute;
    const size_t out_at = nest[i].schedule.outer[depth];
    for (size_t k = i + 1; k < j; ++k)
      TENET_ASSERT(nest[k].stmt->compute.out[out_at].extent() == c.out[out_at].extent(),
                   "statements " << c.result->name << " and " << nest[k].stmt->compute.result->name
                                 << " share a loop of different extents");
    Node names;
    names.kind = NodeKind::NameScope;
    for (size_t k = i; k < j; ++k) names.members.push_back(&nest[k].stmt->compute);
    names.reserved = loop_vars;
    const Var var = fresh(c.out[out_at].index);
    names.declares = {var};
    out.open(std::move(names));
    const Context inside = hoist_above_shared_loop(out, nest, i, j, loop_vars, ctx);
    std::optional<ParallelWork> work;
    if (depth == 0)
      work = parallel_work(std::vector<Scheduled>(nest.begin() + long(i), nest.begin() + long(j)));
    Node loop = for_node(var, ix::constant(0), ix::extent(c.result.get(), int(out_at)), work);
    loop.independent = true;  // each reads only what the current iteration computed
    out.open(std::move(loop));
    loop_vars.push_back(var);
    declare_rows(out, nest, i, j, loop_vars.size());
    shared(out, nest, i, j, loop_vars, inside);
    loop_vars.pop_back();
    out.close(2);
    i = j;
  }
}

void LoopBuilder::declare_rows(Cursor& out, const std::vector<Scheduled>& nest, size_t first,
                               size_t end, size_t depth) {
  std::vector<std::string> names;
  std::vector<Node> arrays;
  for (size_t k = first; k < end; ++k) {
    const ir::ValuePtr& result = nest[k].stmt->compute.result;
    auto row = lowered_.memory.row_local.find(result.get());
    if (row == lowered_.memory.row_local.end() || row->second.depth != depth) continue;
    names.push_back(result->name);
    Node array;
    array.kind = NodeKind::Array;
    array.row_of = result.get();
    array.type = result->type;
    array.count = row->second.elements;
    arrays.push_back(std::move(array));
  }
  if (names.empty()) return;
  std::string list;
  for (size_t k = 0; k < names.size(); ++k)
    list += (k == 0 ? "" : k + 1 == names.size() ? " and " : ", ") + names[k];
  out.note(list +
           ", a row at a time: computed and read only at this iteration of the loops "
           "around (lower/row_local.h).");
  for (Node& array : arrays) out.add(std::move(array));
}

namespace {
/// Equal keys for factors a printer spells the same: a size symbol (or a
/// constant), an extent named after its size, or a difference of sizes.
std::string factor_key(const ir::SizeExpr& e, const char* kind) {
  return (e.is_constant() || e.as_symbol() ? std::string("size ") : std::string(kind)) + e.key();
}
}  // namespace

std::optional<ParallelWork> LoopBuilder::parallel_work(const std::vector<Scheduled>& nest,
                                                       bool column_tiles) const {
  if (!options_.parallel || (nest[0].schedule.outer.empty() && !column_tiles)) return std::nullopt;
  // Work is out elements times reduction length, summed over the statements
  // of the nest; each out element is computed by one thread, in the serial
  // order, so the result is deterministic.
  ParallelWork work;
  work.min_work = options_.parallel_min_work;
  std::vector<std::string> keys;  // per term: its factors' sizes
  for (const Scheduled& m : nest) {
    const ir::Compute& c = m.stmt->compute;
    ParallelWork::Term term;
    std::string key;
    auto factor = [&](const ir::SizeExpr& extent, IndexExpr text, const std::string& k) {
      if (auto n = extent.constant()) {
        term.constant *= *n;
        return;
      }
      term.factors.push_back({std::move(text)});
      key += k + ";";
    };
    for (size_t d = 0; d < c.out.size(); ++d)
      factor(c.out[d].extent(), ix::extent(c.result.get(), int(d)),
             factor_key(c.result->shape[d], "extent "));
    for (size_t r = 0; r < c.reduce.size(); ++r) {
      const ir::Dim& d = c.reduce[r];
      // A loop narrowed to a window by its guard runs at most the window's width.
      if (auto window = window_trip_count(m.guard.reduce[r])) {
        const auto extent = d.extent().constant();
        term.constant *= extent ? std::min(*extent, *window) : *window;
        continue;
      }
      IndexExpr length = d.lo == ir::SizeExpr(0)
                             ? ix::size(d.hi)
                             : ix::binary(IndexKind::Sub, ix::size(d.hi), ix::size(d.lo));
      factor(d.extent(), length,
             d.lo == ir::SizeExpr(0) ? factor_key(d.hi, "expr ")
                                     : "(" + d.lo.key() + ":" + d.hi.key() + ")");
    }
    auto same = std::find(keys.begin(), keys.end(), key);
    if (term.factors.empty())
      work.constant += term.constant;
    else if (same != keys.end())  // "B * I * J * 4", not four times "B * I * J"
      work.terms[size_t(same - keys.begin())].constant += term.constant;
    else
      work.terms.push_back(std::move(term)), keys.push_back(key);
  }
  if (work.terms.empty() && work.constant < work.min_work) return std::nullopt;
  return work;
}

}  // namespace detail

LoopTree lower_loops(const LoweredFunction& lowered, const LoopOptions& options) {
  LoopTree tree;
  detail::LoopBuilder builder(lowered, options, tree);
  detail::Cursor out(tree.body);
  detail::Context ctx;
  ctx.check_indices = options.index_checks;
  builder.block(out, lowered.function->body, ctx);
  tree.built = true;
  return tree;
}

}  // namespace tenet::lower
