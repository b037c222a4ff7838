// A `Loop` statement as a for loop that hands its carried tensors on
// (function_emitter.h; the carries' memory: lower/memory_plan.h).
#include <string>

#include "codegen/function_emitter.h"

namespace tenet::codegen::detail {

void FunctionEmitter::emit_loop(Code& code, const lower::Node& n, const Scope& scope) {
  const ir::Stmt& s = *n.stmt;
  const ir::Loop& l = *s.loop;
  code.comment(comment_text(s));
  const std::string& var = loop_vars_.at(&l);
  // One state pointer per carried tensor: the value the next iteration starts
  // from, and after the loop the result.
  for (const auto& c : l.carried) {
    if (!liveness_.live(c)) continue;
    const std::string type = std::string(c_type_name(c.result->type));
    const std::string& state = access(c.result).pointer;
    if (c.param)
      code.line("const " + type + "* " + state + " = " + access(c.init).pointer + ";  // " +
                c.param->name + " of the coming iteration");
    else
      code.line("const " + type + "* " + state + " = nullptr;  // " + c.next->name +
                " of the last iteration");
  }
  code.open("for (int64_t " + var + " = 0; " + var + " < " + std::to_string(l.trip) + "; ++" + var +
            ")");
  Scope inner = scope;
  inner.bind(l.var, var, 0, l.trip);
  for (const auto& c : l.carried)
    if (c.param && liveness_.live(c))
      code.line("const " + std::string(c_type_name(c.param->type)) + "* __restrict__ " +
                access(c.param).pointer + " = " + access(c.result).pointer + ";");
  bool first_in_place = true;
  for (const ir::Stmt& b : l.body) {
    if (b.kind != ir::StmtKind::Compute || !liveness_.live(b.compute)) continue;
    auto it = in_place_buffers_.find(b.compute.result.get());
    if (it == in_place_buffers_.end()) continue;
    if (first_in_place)
      code.note("Alternating buffers: a new state never overwrites the one being read.");
    first_in_place = false;
    code.line(std::string(c_type_name(b.compute.result->type)) + "* __restrict__ " +
              access(b.compute.result).pointer + " = " + it->second + "[" + var + " % 2];");
  }
  code.line("");
  print_block(code, n.body, inner);

  bool any = false;
  for (const auto& c : l.carried) {
    if (!liveness_.live(c)) continue;
    const std::string& state = access(c.result).pointer;
    const std::string& next = access(c.next).pointer;
    if (!c.param) {
      if (!any) code.line("");
      code.line(state + " = " + next + ";");
      any = true;
      continue;
    }
    switch (memory_.carry_kind.at(&c)) {
      case lower::CarryKind::Unchanged:
        continue;
      case lower::CarryKind::Alias:
      case lower::CarryKind::InPlace:
        break;
      case lower::CarryKind::Copy: {
        const std::string slot = carry_buffers_.at(&c) + "[" + var + " % 2]";
        if (!any) code.line("");
        code.line(copy_text(next, count_text(*c.next), slot));
        code.line(state + " = " + slot + ";");
        any = true;
        continue;
      }
    }
    if (!any) code.line("");
    code.line(state + " = " + next + ";");
    any = true;
  }
  code.close();
}

}  // namespace tenet::codegen::detail
