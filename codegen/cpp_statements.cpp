// Statements as loop nests: a Compute becomes out loops around (reduce loops
// around) one assignment; a Loop becomes a for loop that hands its carried
// tensors from one iteration to the next (see CarryKind).
#include "codegen/function_emitter.h"
#include "ir/printer.h"
#include "support/error.h"

namespace tenet::codegen::detail {

namespace {

std::string c_type(ElemType t) {
  return std::string(c_type_name(t));
}

std::string for_header(const std::string& var, const std::string& lo, const CExpr& hi) {
  return "for (int64_t " + var + " = " + lo + "; " + var + " < " + wrap(hi, kPrecRelational + 1) +
         "; ++" + var + ")";
}

const char* assign_text(ir::ReduceOp op) {
  switch (op) {
    case ir::ReduceOp::None:
      return "=";
    case ir::ReduceOp::Sum:
      return "+=!";
    case ir::ReduceOp::Max:
      return "max=!";
    case ir::ReduceOp::Min:
      return "min=!";
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
  std::string text = lhs + ") " + assign_text(c.op) + " " + ir::print(c.body);
  if (c.init) text += "  (starting from " + c.init->name + ")";
  return text;
}

void FunctionEmitter::emit_block(Code& code, const std::vector<ir::Stmt>& body,
                                 const Scope& scope) {
  bool first = true;
  for (const ir::Stmt& s : body) {
    bool live =
        s.kind == ir::StmtKind::Compute ? liveness_.live(s.compute) : liveness_.live(*s.loop);
    if (!live) continue;
    if (!first) code.line("");
    first = false;
    if (s.kind == ir::StmtKind::Compute)
      emit_compute(code, s, scope);
    else
      emit_loop(code, s, scope);
  }
}

std::string FunctionEmitter::parallel_pragma(const ir::Compute& c) const {
  if (!options_.openmp || c.out.empty()) return "";
  // Work is out elements times reduction length; each out element is computed
  // by one thread, in the serial order, so the result is deterministic.
  ir::SizeExpr work = 1;
  int64_t constant = 1;
  std::string factors;
  const TensorAccess& result = access(c.result);
  auto factor = [&](const ir::SizeExpr& extent, const std::string& text) {
    work = work * extent;
    if (auto k = extent.constant())
      constant *= *k;
    else
      factors += (factors.empty() ? "" : " * ") + text;
  };
  for (size_t d = 0; d < c.out.size(); ++d) factor(c.out[d].extent(), result.dims[d]);
  for (const ir::Dim& d : c.reduce) {
    // "(hi - lo)" reads better than the normal form of the difference.
    CExpr hi = size_to_c(d.hi, size_names_), lo = size_to_c(d.lo, size_names_);
    std::string extent = d.lo == ir::SizeExpr(0) ? wrap(hi, kPrecMultiplicative + 1)
                                                 : "(" + wrap(hi, kPrecAdditive) + " - " +
                                                       wrap(lo, kPrecAdditive + 1) + ")";
    factor(d.extent(), extent);
  }
  const std::string threshold = std::to_string(options_.parallel_min_work);
  if (auto k = work.constant())
    return *k >= options_.parallel_min_work ? "#pragma omp parallel for" : "";
  if (constant != 1) factors += " * " + std::to_string(constant);
  return "#pragma omp parallel for if (" + factors + " >= " + threshold + ")";
}

Namer FunctionEmitter::statement_namer(const ir::Compute& c, const Scope& scope) const {
  // Index names may shadow function-level names the statement does not use
  // (a tensor e elsewhere must not rename the index e here).
  Namer local;
  for (const auto& [ir_name, name] : size_names_) local.reserve(name);
  for (const auto& [ir_name, index] : scope.indices) local.reserve(index.name);
  std::vector<const ir::Value*> tensors = {c.result.get(), c.init.get()};
  std::vector<const ir::ExprNode*> pending = {c.body.get()};
  while (!pending.empty()) {
    const ir::ExprNode* e = pending.back();
    pending.pop_back();
    if (e->kind == ir::ExprKind::Read) tensors.push_back(e->tensor.get());
    for (const auto& a : e->args) pending.push_back(a.get());
  }
  for (const ir::Value* v : tensors) {
    if (!v) continue;
    const TensorAccess& t = tensors_.at(v);
    local.reserve(t.pointer);
    for (const auto& s : t.strides) local.reserve(s);
    for (const auto& d : t.dims) local.reserve(d);
  }
  return local;
}

void FunctionEmitter::emit_compute(Code& code, const ir::Stmt& s, const Scope& scope) {
  if (gemms_.count(&s))
    emit_gemm(code, s, scope);
  else
    emit_loop_nest(code, s, scope);
}

void FunctionEmitter::emit_loop_nest(Code& code, const ir::Stmt& s, const Scope& scope) {
  const ir::Compute& c = s.compute;
  code.comment(comment_text(s));
  Scope inner = scope;
  Namer local = statement_namer(c, scope);
  std::vector<std::string> out_vars, reduce_vars;
  for (const ir::Dim& d : c.out) {
    out_vars.push_back(local.take(d.index));
    inner.indices[d.index] = IndexInfo{out_vars.back(), d.lo, d.hi};
  }
  for (const ir::Dim& d : c.reduce) {
    reduce_vars.push_back(local.take(d.index));
    inner.indices[d.index] = IndexInfo{reduce_vars.back(), d.lo, d.hi};
  }
  std::vector<ir::Affine> position;
  for (const ir::Dim& d : c.out) position.push_back(ir::Affine::var(d.index));
  const TensorAccess& result = access(c.result);
  const std::string target = result.pointer + "[" + flat_offset(result, position, inner) + "]";

  const bool reduces = c.op != ir::ReduceOp::None;
  const bool scalar_block = c.out.empty() && reduces;  // scopes the accumulator
  if (scalar_block) code.open("");
  if (std::string pragma = parallel_pragma(c); !pragma.empty()) code.line(pragma);
  for (size_t d = 0; d < c.out.size(); ++d)
    code.open(for_header(out_vars[d], "0", CExpr{result.dims[d], kPrecPrimary}));
  if (!reduces) {
    code.line(target + " = " + emit_expr(c.body, inner).text + ";");
  } else {
    // Unlike indices, the accumulator never shadows a function-level name:
    // "acc" reading as a tensor elsewhere would mislead.
    std::string acc = "acc";
    for (int n = 1; names_.taken(acc) || local.taken(acc); ++n) acc = "acc_" + std::to_string(n);
    local.reserve(acc);
    std::string start = reduce_identity(c.op, c.result->type);
    if (c.init) {
      const TensorAccess& init = access(c.init);
      start = init.pointer + "[" + flat_offset(init, position, inner) + "]";
    }
    code.line(c_type(c.result->type) + " " + acc + " = " + start + ";");
    for (size_t d = 0; d < c.reduce.size(); ++d) {
      const ir::Dim& dim = c.reduce[d];
      code.open(for_header(reduce_vars[d], size_to_c(dim.lo, size_names_).text,
                           size_to_c(dim.hi, size_names_)));
    }
    code.line(reduce_step(c.op, c.result->type, acc, emit_expr(c.body, inner)));
    for (size_t d = 0; d < c.reduce.size(); ++d) code.close();
    code.line(target + " = " + acc + ";");
  }
  for (size_t d = 0; d < c.out.size(); ++d) code.close();
  if (scalar_block) code.close();
}

void FunctionEmitter::emit_loop(Code& code, const ir::Stmt& s, const Scope& scope) {
  const ir::Loop& l = *s.loop;
  code.comment(comment_text(s));
  const std::string& var = loop_vars_.at(&l);
  // One state pointer per carried tensor: the value the next iteration starts
  // from, and after the loop the result.
  for (const auto& c : l.carried) {
    if (!liveness_.live(c)) continue;
    const std::string type = c_type(c.result->type);
    const std::string& state = access(c.result).pointer;
    if (c.param)
      code.line("const " + type + "* " + state + " = " + access(c.init).pointer + ";  // " +
                c.param->name + " of the coming iteration");
    else
      code.line("const " + type + "* " + state + " = nullptr;  // " + c.next->name +
                " of the last iteration");
  }
  code.open(for_header(var, "0", CExpr{std::to_string(l.trip), kPrecPrimary}));
  Scope inner = scope;
  inner.indices[l.var] = IndexInfo{var, 0, l.trip};
  for (const auto& c : l.carried)
    if (c.param && liveness_.live(c))
      code.line("const " + c_type(c.param->type) + "* __restrict__ " + access(c.param).pointer +
                " = " + access(c.result).pointer + ";");
  bool first_in_place = true;
  for (const ir::Stmt& b : l.body) {
    if (b.kind != ir::StmtKind::Compute || !liveness_.live(b.compute)) continue;
    auto it = in_place_buffers_.find(b.compute.result.get());
    if (it == in_place_buffers_.end()) continue;
    if (first_in_place)
      code.note("Alternating buffers: a new state never overwrites the one being read.");
    first_in_place = false;
    code.line(c_type(b.compute.result->type) + "* __restrict__ " +
              access(b.compute.result).pointer + " = " + it->second + "[" + var + " % 2];");
  }
  code.line("");
  emit_block(code, l.body, inner);

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
    switch (carry_kind_.at(&c)) {
      case CarryKind::Unchanged:
        continue;
      case CarryKind::Alias:
      case CarryKind::InPlace:
        break;
      case CarryKind::Copy: {
        const std::string slot = carry_buffers_.at(&c) + "[" + var + " % 2]";
        if (!any) code.line("");
        code.line("std::copy_n(" + next + ", " + count_text(*c.next) + ", " + slot + ");");
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
