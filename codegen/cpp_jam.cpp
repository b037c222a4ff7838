// A jammed reduction (passes/schedule.h, 3): its last out loop by tiles,
// the tile's accumulators interleaved inside the reduce loops.
#include <cctype>
#include <map>
#include <set>
#include <string>

#include "codegen/function_emitter.h"
#include "ir/mutator.h"

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

void FunctionEmitter::emit_jammed(Code& code, const Scheduled& m, const JammedText& text,
                                  Namer& local, Scope& scope,
                                  const std::function<void()>& open_reduce) {
  const ir::Compute& c = m.stmt->compute;
  const size_t last = m.schedule.outer.back();
  const std::string& index = scope.indices.at(c.out[last].index).name;
  const std::string tile = local.take(c.out[last].index + "_tile");
  const std::string lane = local.take(c.out[last].index + "_lane");
  const std::string n = std::to_string(m.schedule.jam), element = text.acc + "[" + lane + "]";
  // `lines` for each element of the tile; GCC then keeps the accumulators in registers.
  auto lanes = [&](const std::vector<std::string>& lines) {
    code.line("#pragma GCC unroll " + n);
    code.open("for (int64_t " + lane + " = 0; " + lane + " < " + n + "; ++" + lane + ")");
    bool uses_index = false;
    for (const std::string& line : lines)
      uses_index = uses_index || mentions_identifier(line, index);
    if (uses_index) code.line("const int64_t " + index + " = " + tile + " + " + lane + ";");
    for (const std::string& line : lines) code.line(line);
    code.close();
  };
  code.open("for (int64_t " + tile + " = 0; " + tile + " < " + access(c.result).dims[last] + "; " +
            tile + " += " + n + ")");
  // Per element of the tile, before the reduce loops: its accumulator's
  // start, and what its terms share.
  std::set<std::string> reduce;
  for (const ir::Dim& d : c.reduce) reduce.insert(d.index);
  std::vector<ir::Expr> shared;
  lane_values(m.guard.body, reduce, shared);
  std::vector<std::string> start = {element + " = " + text.start + ";"};
  std::map<std::string, std::string> computed;  // the same value twice: one array
  code.line(text.acc_type + " " + text.acc + "[" + n + "];");
  for (const ir::Expr& e : shared) {
    const std::string value = emit_expr(e, scope).text;
    auto [at, added] = computed.try_emplace(value, "");
    if (added) {
      at->second = local.take(c.out[last].index + "_value");
      code.line(std::string(c_type_name(compute_type(e->type))) + " " + at->second + "[" + n +
                "];");
      start.push_back(at->second + "[" + lane + "] = " + value + ";");
    }
    scope.hoisted_values[e.get()] = at->second + "[" + lane + "]";
  }
  lanes(start);
  open_reduce();
  lanes({reduce_step(c.op, text.computed, element, emit_expr(m.guard.body, scope))});
  for (size_t k = 0; k < c.reduce.size(); ++k) code.close();
  lanes({text.target + " = " +
         stored(c.result->type, text.wide ? "float(" + element + ")" : element) + ";"});
  code.close();
}

}  // namespace tenet::codegen::detail
