// What every statement's code needs around the loop tree's nodes
// (cpp_loops.cpp): its comment, the names it reserves, the check of the
// dimensions its computed indices read, a view's pointer.
#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "codegen/function_emitter.h"
#include "ir/affine.h"
#include "ir/mutator.h"
#include "ir/printer.h"
#include "ir/scatter_form.h"
#include "support/error.h"

namespace tenet::codegen::detail {

namespace {

std::string c_type(ElemType t) {
  return std::string(c_type_name(t));
}

const char* assign_op_text(ir::ReduceOp op) {
  switch (op) {
    case ir::ReduceOp::None:
      return "=";
    case ir::ReduceOp::Sum:
      return "+=!";
    case ir::ReduceOp::Max:
      return "max=!";
    case ir::ReduceOp::Min:
      return "min=!";
    case ir::ReduceOp::Prod:
      return "*=!";
  }
  return "=";
}

}  // namespace

std::string FunctionEmitter::comment_text(const ir::Stmt& s) {
  if (!s.source.empty()) return s.source;
  if (s.kind == ir::StmtKind::Loop)
    return "for " + s.loop->var + " in 0:" + std::to_string(s.loop->trip);
  // IR built without source text (tests, passes): describe it in IR notation.
  const ir::Compute& c = s.compute;
  std::string lhs = c.result->name + "(";
  for (size_t i = 0; i < c.out.size(); ++i) lhs += (i ? ", " : "") + c.out[i].index;
  std::string text = lhs + ") " + assign_op_text(c.op) + " " + ir::print(c.body);
  if (c.init) text += "  (starting from " + c.init->name + ")";
  return text;
}

void FunctionEmitter::check_nonempty_dims(Code& code, const ir::Compute& c) const {
  // A computed index that fails its check reads element 0 instead, which an
  // empty dimension does not have: such a read fails before the loops start
  // (when they run at all).
  std::set<std::pair<const ir::Value*, size_t>> seen;
  ir::for_each_node(c.body, [&](const ir::Expr& e) {
    if (e->kind != ir::ExprKind::Read || e->guarded) return;
    for (size_t d = 0; d < e->computed.size(); ++d) {
      if (!e->computed[d] || !seen.insert({e->tensor.get(), d}).second) continue;
      if (auto n = e->tensor->shape[d].constant(); n && *n > 0) continue;
      std::string runs;
      for (const auto* dims : {&c.out, &c.reduce})
        for (const ir::Dim& dim : *dims)
          runs +=
              " && " + wrap(size_to_c(dim.hi - dim.lo, size_names_), kPrecRelational + 1) + " > 0";
      const std::string message = "index " + ir::index_text(e->computed[d]) + " of the read " +
                                  ir::read_text(*e) + " in the statement defining '" +
                                  c.result->name + "' reads dimension " + std::to_string(d) +
                                  " of " + e->tensor->name + ", which is empty";
      code.line("if (" + access(e->tensor).dims[d] + " == 0" + runs + ")");
      code.line("  throw tenet::IndexError(" + c_string_literal(message) + ");");
    }
  });
}

Namer FunctionEmitter::statement_namer(const ir::Compute& c, const Scope& scope) const {
  Namer local;
  reserve_names(local, c, scope);
  return local;
}

void FunctionEmitter::reserve_names(Namer& local, const ir::Compute& c, const Scope& scope) const {
  // Index names may shadow function-level names the statement does not use
  // (a tensor e elsewhere must not rename the index e here).
  for (const auto& [ir_name, name] : size_names_) local.reserve(name);
  for (const auto& [ir_name, index] : scope.indices) local.reserve(index.name);
  std::vector<const ir::Value*> tensors = {c.result.get(), c.init.get()};
  std::vector<const ir::ExprNode*> pending = {c.body.get()};
  while (!pending.empty()) {
    const ir::ExprNode* e = pending.back();
    pending.pop_back();
    if (e->kind == ir::ExprKind::Read) tensors.push_back(e->tensor.get());
    for (const auto& a : e->args) pending.push_back(a.get());
    for (const auto& a : e->computed)
      if (a) pending.push_back(a.get());
  }
  for (const ir::Value* v : tensors) {
    if (!v) continue;
    const TensorAccess& t = tensors_.at(v);
    local.reserve(t.pointer);
    for (const auto& s : t.strides) local.reserve(s);
    for (const auto& d : t.dims) local.reserve(d);
  }
}

void FunctionEmitter::emit_view(Code& code, const ir::Stmt& s) {
  const ir::Compute& c = s.compute;
  code.comment(comment_text(s));
  code.line("const " + c_type(c.result->type) + "* const " + access(c.result).pointer + " = " +
            access(c.body->tensor).pointer + ";  // a view: the same elements, row-major");
}

}  // namespace tenet::codegen::detail
