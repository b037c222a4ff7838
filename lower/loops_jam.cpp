// A jammed reduction (passes/schedule.h, 3): its last out loop by tiles,
// the tile's accumulators interleaved inside the reduce loops.
#include <map>
#include <set>
#include <string>

#include "ir/mutator.h"
#include "ir/printer.h"
#include "lower/loop_builder.h"
#include "support/error.h"

namespace tenet::lower::detail {

namespace {

bool reads_through_computed_index(const ir::Expr& e) {
  return ir::any_node(e, [](const ir::Expr& n) {
    return n->kind == ir::ExprKind::Read && n->has_computed_index();
  });
}

/// The largest subexpressions of `e` that no reduce index changes: values
/// of the tile's element (`rsqrt(var(j) + eps) * w(j)`), computed once per
/// element rather than once per term. Not through a computed index (its
/// check belongs where the read is).
void lane_values(const ir::Expr& e, const std::set<std::string>& reduce,
                 std::vector<ir::Expr>& out) {
  switch (e->kind) {
    case ir::ExprKind::Const:
    case ir::ExprKind::Index:
    case ir::ExprKind::Size:
      return;
    default:
      break;
  }
  if (!ir::mentions_index(e, reduce) && !reads_through_computed_index(e)) {
    out.push_back(e);
    return;
  }
  if (e->kind == ir::ExprKind::Read) return;  // its indices are the read's own
  for (const ir::Expr& a : e->args) lane_values(a, reduce, out);
}

/// Whether `e`, with the values in `hoisted` standing for themselves, mentions `index`.
bool mentions_outside(const ir::Expr& e, const std::string& index,
                      const std::set<const ir::ExprNode*>& hoisted) {
  if (hoisted.count(e.get())) return false;
  if (e->kind == ir::ExprKind::Index && e->index == index) return true;
  if (e->kind == ir::ExprKind::Read)
    for (const ir::Affine& a : e->indices)
      if (a.coef(index) != 0) return true;
  for (const ir::Expr& a : e->args)
    if (mentions_outside(a, index, hoisted)) return true;
  for (const ir::Expr& a : e->computed)
    if (a && mentions_outside(a, index, hoisted)) return true;
  return false;
}

}  // namespace

void LoopBuilder::jam_run(Cursor& out, const std::vector<Scheduled>& nest, size_t first, size_t end,
                          const std::vector<Var>& loop_vars, const Context& ctx) {
  const std::vector<Scheduled> run(nest.begin() + long(first), nest.begin() + long(end));
  const ir::Compute& head = run[0].stmt->compute;
  bool one_pass = true;
  for (const Scheduled& m : run) {
    const ir::Compute& c = m.stmt->compute;
    TENET_ASSERT(m.schedule.jam == run[0].schedule.jam && c.reduce.size() == head.reduce.size(),
                 "statements " << head.result->name << " and " << c.result->name
                               << " share a jammed loop but not their tile or reduce loops");
    for (const ReduceRange& range : m.guard.reduce) one_pass = one_pass && !range.narrowed();
  }
  if (!one_pass) {
    // A guard narrows some member's reduce loops: each runs its own pass.
    for (size_t k = 0; k < run.size(); ++k) {
      if (k > 0) out.blank();
      statement(out, run[k], loop_vars, ctx, !loop_vars.empty());
    }
    return;
  }
  // At the outermost level, the tile loop is the parallel one.
  std::optional<ParallelWork> work;
  if (loop_vars.empty()) work = parallel_work(run);
  const std::string& index = head.out.back().index;
  JamGroup group{fresh(index + "_tile"), fresh(index + "_lane"), {}, {}};
  for (const ir::Dim& d : head.reduce) group.reduce_vars.push_back(fresh(d.index));
  Node names;
  names.kind = NodeKind::NameScope;
  for (const Scheduled& m : run) names.members.push_back(&m.stmt->compute);
  names.reserved = loop_vars;  // the enclosing loops
  names.declares = {group.tile, group.lane};
  for (const Var& v : group.reduce_vars) names.declares.push_back(v);
  out.open(std::move(names));
  for (const Scheduled& m : run) statement(out, m, loop_vars, ctx, true, &group);
  out.note("The reductions of " + std::to_string(run.size()) +
           " statements in one pass: they sum the same terms' ranges and read none of each "
           "other's results.");
  jam_group(out, group, work, true, nullptr);
  out.close();
}

/// Building a jam group's loops: each member's parts in a region continuing
/// its statement's (when the group is outside their regions), for each
/// element of the tile (unrolled: the accumulators stay in registers).
struct JamParts {
  Cursor& out;
  const Var& tile;
  const Var& lane;
  int64_t n;
  bool resume;

  void open_region(const ir::Stmt* stmt) {
    if (!resume) return;
    Node region;
    region.kind = NodeKind::Statement;
    region.stmt = stmt;
    region.resume = true;
    out.open(std::move(region));
  }
  void close_region() {
    if (resume) out.close();
  }
  /// `nodes` for each element of the tile, after the element's index `index`
  /// (a member's jammed out index) when they use it.
  void lanes(const Var& index, std::vector<Node> nodes, bool uses_index) {
    Node loop;
    loop.kind = NodeKind::For;
    loop.var = lane;
    loop.first = ix::constant(0);
    loop.end = ix::constant(n);
    loop.loop_kind = LoopKind::Unrolled;
    loop.unroll = n;
    out.open(std::move(loop));
    if (uses_index)
      out.add(let_index(index, ix::binary(IndexKind::Add, ix::var(tile), ix::var(lane))));
    for (Node& node : nodes) out.add(std::move(node));
    out.close();
  }
  Place element(const Var& array) const { return local_place(array, ix::var(lane)); }
};

void LoopBuilder::jam_starts(JamParts& parts, const JamMember& member,
                             std::set<const ir::ExprNode*>& hoisted) {
  // Before the reduce loops, per element of the tile: its accumulator's
  // start, and the values its terms share (computed once per element).
  Cursor& out = parts.out;
  const ir::Compute& c = member.m->stmt->compute;
  const std::string& index = c.out[member.m->schedule.outer.back()].index;
  std::set<std::string> reduce;
  for (const ir::Dim& d : c.reduce) reduce.insert(d.index);
  std::vector<ir::Expr> shared;
  lane_values(member.m->guard.body, reduce, shared);
  parts.open_region(member.m->stmt);
  out.add(array_node(member.acc, member.computed, member.wide, parts.n));
  std::vector<Node> start = {
      assign_node(parts.element(member.acc), member.start, ir::ReduceOp::None, member.computed)};
  bool uses_index = c.init != nullptr;
  std::map<std::string, Var> computed;  // the same value twice: one array
  std::vector<Node> aliases;
  for (const ir::Expr& e : shared) {
    auto [at, added] = computed.try_emplace(ir::print(e), Var{});
    if (added) {
      at->second = fresh(index + "_value");
      out.add(array_node(at->second, compute_type(e->type), false, parts.n));
      start.push_back(assign_node(parts.element(at->second), expr_operand(e), ir::ReduceOp::None,
                                  compute_type(e->type)));
      uses_index = uses_index || ir::mentions_index(e, {index});
    }
    Node alias;
    alias.kind = NodeKind::Alias;
    alias.expr = e;
    alias.target = parts.element(at->second);
    aliases.push_back(std::move(alias));
    hoisted.insert(e.get());
  }
  parts.lanes(member.index, std::move(start), uses_index);
  for (Node& alias : aliases) out.add(std::move(alias));
  parts.close_region();
}

void LoopBuilder::jam_group(Cursor& out, JamGroup& group, std::optional<ParallelWork> work,
                            bool resume, const std::function<void()>& open_reduce) {
  const Scheduled& head = *group.members[0].m;
  const ir::Compute& first = head.stmt->compute;
  const size_t last = head.schedule.outer.back();
  JamParts parts{out, group.tile, group.lane, head.schedule.jam, resume};
  Node tiles = for_node(group.tile, ix::constant(0), ix::extent(first.result.get(), int(last)),
                        std::move(work));
  tiles.step = ix::constant(parts.n);
  out.open(std::move(tiles));
  std::vector<std::set<const ir::ExprNode*>> hoisted(group.members.size());
  for (size_t k = 0; k < group.members.size(); ++k) jam_starts(parts, group.members[k], hoisted[k]);
  if (open_reduce) {
    open_reduce();
  } else {
    for (size_t d = 0; d < first.reduce.size(); ++d)
      out.open(for_node(group.reduce_vars[d], ix::size(first.reduce[d].lo),
                        ix::size(first.reduce[d].hi)));
  }
  // The interleaved steps: each member's tile of accumulators, term by term.
  for (size_t k = 0; k < group.members.size(); ++k) {
    const JamMember& member = group.members[k];
    const ir::Compute& c = member.m->stmt->compute;
    parts.open_region(member.m->stmt);
    parts.lanes(member.index,
                {assign_node(parts.element(member.acc), expr_operand(member.m->guard.body), c.op,
                             member.computed)},
                mentions_outside(member.m->guard.body, c.out[last].index, hoisted[k]));
    parts.close_region();
  }
  out.close(first.reduce.size());
  for (const JamMember& member : group.members) {
    Node store = assign_node(member.target, load(parts.element(member.acc)), ir::ReduceOp::None,
                             member.computed);
    store.round_double = member.wide;
    parts.open_region(member.m->stmt);
    parts.lanes(member.index, {std::move(store)}, true);
    parts.close_region();
  }
  out.close();
}

}  // namespace tenet::lower::detail
