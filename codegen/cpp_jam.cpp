// A jammed reduction (passes/schedule.h, 3): its last out loop by tiles,
// the tile's accumulators interleaved inside the reduce loops.
#include <cctype>
#include <map>
#include <set>
#include <string>

#include "codegen/function_emitter.h"
#include "ir/mutator.h"
#include "support/error.h"

namespace tenet::codegen::detail {

namespace {

/// Whether `name` occurs in `text` as a whole identifier.
bool mentions_identifier(const std::string& text, const std::string& name) {
  auto word = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1))
    if ((at == 0 || !word(text[at - 1])) &&
        (at + name.size() == text.size() || !word(text[at + name.size()])))
      return true;
  return false;
}

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

}  // namespace

void FunctionEmitter::emit_jam_run(Code& code, const std::vector<Scheduled>& nest, size_t first,
                                   size_t end, const std::vector<std::string>& loop_vars,
                                   const Scope& scope) {
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
  // At the outermost level, the tile loop is the parallel one.
  const std::string pragma = loop_vars.empty() ? parallel_pragma(run) : "";
  if (!one_pass) {
    // A guard narrows some member's reduce loops: each runs its own pass.
    for (size_t k = 0; k < run.size(); ++k) {
      if (k > 0) code.line("");
      emit_scheduled(code, run[k], loop_vars, scope, !loop_vars.empty());
    }
    return;
  }
  Namer names;
  for (const Scheduled& m : run) reserve_names(names, m.stmt->compute, scope);
  for (const std::string& outer : loop_vars) names.reserve(outer);  // the enclosing loops
  const std::string& index = head.out.back().index;
  JamGroup group{names.take(index + "_tile"), names.take(index + "_lane"), {}, {}};
  for (const ir::Dim& d : head.reduce) group.reduce_vars.push_back(names.take(d.index));
  for (const Scheduled& m : run) emit_scheduled(code, m, loop_vars, scope, true, &group);
  for (const JamMember& member : group.members)
    for (const std::string* name : {&member.index, &member.text.acc}) names.reserve(*name);
  code.note("The reductions of " + std::to_string(run.size()) +
            " statements in one pass: they sum the same terms' ranges and read none of each "
            "other's results.");
  if (!pragma.empty()) code.line(pragma);
  emit_jam_group(code, group, names, nullptr);
}

void FunctionEmitter::emit_jam_group(Code& code, JamGroup& group, Namer& names,
                                     const std::function<void()>& open_reduce) {
  const Scheduled& head = *group.members[0].m;
  const ir::Compute& first = head.stmt->compute;
  const size_t last = head.schedule.outer.back();
  const std::string n = std::to_string(head.schedule.jam);
  const std::string& tile = group.tile;
  const std::string& lane = group.lane;
  // `lines` of `member` for each element of the tile; GCC then keeps the
  // accumulators in registers.
  auto lanes = [&](const JamMember& member, const std::vector<std::string>& lines) {
    code.line("#pragma GCC unroll " + n);
    code.open("for (int64_t " + lane + " = 0; " + lane + " < " + n + "; ++" + lane + ")");
    bool uses_index = false;
    for (const std::string& line : lines)
      uses_index = uses_index || mentions_identifier(line, member.index);
    if (uses_index) code.line("const int64_t " + member.index + " = " + tile + " + " + lane + ";");
    for (const std::string& line : lines) code.line(line);
    code.close();
  };
  auto element = [&](const JamMember& member) { return member.text.acc + "[" + lane + "]"; };
  code.open("for (int64_t " + tile + " = 0; " + tile + " < " + access(first.result).dims[last] +
            "; " + tile + " += " + n + ")");
  // Per element of the tile, before the reduce loops: its accumulator's
  // start, and what its terms share.
  for (JamMember& member : group.members) {
    const ir::Compute& c = member.m->stmt->compute;
    std::set<std::string> reduce;
    for (const ir::Dim& d : c.reduce) reduce.insert(d.index);
    std::vector<ir::Expr> shared;
    lane_values(member.m->guard.body, reduce, shared);
    std::vector<std::string> start = {element(member) + " = " + member.text.start + ";"};
    std::map<std::string, std::string> computed;  // the same value twice: one array
    code.line(member.text.acc_type + " " + member.text.acc + "[" + n + "];");
    for (const ir::Expr& e : shared) {
      const std::string value = emit_expr(e, member.scope).text;
      auto [at, added] = computed.try_emplace(value, "");
      if (added) {
        at->second = names.take(c.out[last].index + "_value");
        code.line(std::string(c_type_name(compute_type(e->type))) + " " + at->second + "[" + n +
                  "];");
        start.push_back(at->second + "[" + lane + "] = " + value + ";");
      }
      member.scope.hoisted_values[e.get()] = at->second + "[" + lane + "]";
    }
    lanes(member, start);
  }
  if (open_reduce) {
    open_reduce();
  } else {
    for (size_t d = 0; d < first.reduce.size(); ++d)
      code.open("for (int64_t " + group.reduce_vars[d] + " = " +
                size_to_c(first.reduce[d].lo, size_names_).text + "; " + group.reduce_vars[d] +
                " < " + wrap(size_to_c(first.reduce[d].hi, size_names_), kPrecRelational + 1) +
                "; ++" + group.reduce_vars[d] + ")");
  }
  for (const JamMember& member : group.members)
    lanes(member, {reduce_step(member.m->stmt->compute.op, member.text.computed, element(member),
                               emit_expr(member.m->guard.body, member.scope))});
  for (size_t k = 0; k < first.reduce.size(); ++k) code.close();
  for (const JamMember& member : group.members)
    lanes(member, {member.text.target + " = " +
                   stored(member.m->stmt->compute.result->type,
                          member.text.wide ? "float(" + element(member) + ")" : element(member)) +
                   ";"});
  code.close();
}

}  // namespace tenet::codegen::detail
