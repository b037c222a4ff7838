// The loop tree (lower/loops.h) printed as C++: every node as its text,
// variables named in the order they are declared (within their NameScope),
// IR expressions in the names their statement's bindings give.
#include <algorithm>
#include <string>

#include "codegen/function_emitter.h"
#include "ir/printer.h"
#include "support/error.h"

namespace tenet::codegen::detail {

namespace {

std::string c_type(ElemType t) {
  return std::string(c_type_name(t));
}

}  // namespace

CExpr FunctionEmitter::index_text(const lower::IndexExpr& e, const Scope& scope) const {
  using lower::IndexKind;
  auto arg = [&](size_t i) { return index_text(e->args[i], scope); };
  auto infix = [&](const char* op, int prec) {
    return CExpr{wrap(arg(0), prec) + " " + op + " " + wrap(arg(1), prec + 1), prec};
  };
  auto call = [&](const char* fn) {
    return CExpr{std::string(fn) + "(" + arg(0).text + ", " + arg(1).text + ")", kPrecPrimary};
  };
  switch (e->kind) {
    case IndexKind::Const:
      return CExpr{std::to_string(e->value), kPrecPrimary};
    case IndexKind::Size:
      return size_to_c(e->size, size_names_);
    case IndexKind::Extent:
      return CExpr{access_of(e->tensor).dims[size_t(e->dim)], kPrecPrimary};
    case IndexKind::Variable:
      return CExpr{var_name(e->var), kPrecPrimary};
    case IndexKind::Affine:
      return affine_to_c(e->affine, scope);
    case IndexKind::Value:
      return emit_expr(e->value_expr, scope);
    case IndexKind::Add:
      return infix("+", kPrecAdditive);
    case IndexKind::Sub:
      return infix("-", kPrecAdditive);
    case IndexKind::Mul:
      return infix("*", kPrecMultiplicative);
    case IndexKind::Div:
      return infix("/", kPrecMultiplicative);
    case IndexKind::FloorDiv:
      return call("tenet::floordiv<int64_t>");
    case IndexKind::CeilDiv:
      return call("tenet::ceildiv<int64_t>");
    case IndexKind::Max:
    case IndexKind::Min: {
      const std::string fn = e->kind == IndexKind::Max ? "std::max<int64_t>" : "std::min<int64_t>";
      CExpr text = arg(0);
      for (size_t i = 1; i < e->args.size(); ++i)
        text = CExpr{fn + "(" + text.text + ", " + arg(i).text + ")", kPrecPrimary};
      return text;
    }
  }
  TENET_UNREACHABLE("index expression kind");
}

const TensorAccess& FunctionEmitter::access_of(const ir::Value* v) const {
  auto it = tensors_.find(v);
  TENET_ASSERT(it != tensors_.end(), "no storage for " << v->name);
  return it->second;
}

const std::string& FunctionEmitter::var_name(const lower::Var& v) const {
  TENET_ASSERT(size_t(v.id) < var_names_.size() && !var_names_[size_t(v.id)].empty(),
               "the variable " << v.hint << " is used before it is declared");
  return var_names_[size_t(v.id)];
}

void FunctionEmitter::declare(const lower::Var& v) {
  if (size_t(v.id) >= var_names_.size()) var_names_.resize(size_t(v.id) + 1);
  std::string& name = var_names_[size_t(v.id)];
  if (!name.empty()) return;
  TENET_ASSERT(!namers_.empty(), "the variable " << v.hint << " is declared outside a name scope");
  NameScope& scope = namers_.back();
  for (const lower::Var& r : scope.reserved)
    if (size_t(r.id) < var_names_.size() && !var_names_[size_t(r.id)].empty())
      scope.namer.reserve(var_names_[size_t(r.id)]);
  if (!v.accumulates) {
    name = v.generated ? scope.namer.take_derived(v.hint) : scope.namer.take(v.hint);
    if (!thread_.empty()) kernel_locals_.insert(name);
    return;
  }
  // Unlike indices, an accumulator never shadows a function-level name:
  // "acc" reading as a tensor elsewhere would mislead. Among siblings it is
  // named after its result.
  const std::string base = v.sibling ? access_of(v.accumulates).pointer + "_acc" : "acc";
  name = base;
  for (int n = 1; names_.taken(name) || scope.namer.taken(name); ++n)
    name = base + "_" + std::to_string(n);
  scope.namer.reserve(name);
  if (!thread_.empty()) kernel_locals_.insert(name);
}

std::string FunctionEmitter::place_text(const lower::Place& p, const Scope& scope) const {
  if (p.tensor) {
    const TensorAccess& t = access_of(p.tensor);
    return t.pointer + "[" + flat_offset(t, p.indices, scope) + "]";
  }
  if (!p.at) return var_name(p.local);
  return var_name(p.local) + "[" + index_text(p.at, scope).text + "]";
}

CExpr FunctionEmitter::operand_text(const lower::Operand& o, ElemType compute,
                                    const Scope& scope) const {
  switch (o.kind) {
    case lower::Operand::Expr:
      return emit_expr(o.expr, scope);
    case lower::Operand::Load: {
      const CExpr element{place_text(o.place, scope), kPrecPrimary};
      return o.place.tensor && o.place.tensor->type == ElemType::F16 ? half_to_float(element)
                                                                     : element;
    }
    case lower::Operand::Identity:
      return CExpr{reduce_identity(o.of, compute), kPrecPrimary};
    case lower::Operand::Zero:
      return CExpr{"0.0", kPrecPrimary};
    case lower::Operand::Fold: {
      const std::string n = std::to_string(o.lanes), lanes = var_name(o.place.local);
      if (o.of == ir::ReduceOp::Sum)  // a float32 sum's lanes, in double
        return CExpr{"tenet::sum_lanes<" + n + ">(" + lanes + ")", kPrecPrimary};
      return CExpr{std::string("tenet::fold_lanes<") +
                       (o.of == ir::ReduceOp::Max ? "true" : "false") + ", " + n + ">(" + lanes +
                       ")",
                   kPrecPrimary};
    }
  }
  TENET_UNREACHABLE("operand kind");
}

std::string FunctionEmitter::parallel_text(const lower::ParallelWork& work,
                                           const Scope& scope) const {
  const std::string collapse =
      work.collapse > 1 ? " collapse(" + std::to_string(work.collapse) + ")" : "";
  if (work.literal) {
    const lower::ParallelWork::Term& term = work.terms.at(0);
    std::string product;
    for (const lower::ParallelWork::Factor& f : term.factors)
      product += (product.empty() ? "" : " * ") +
                 wrap(index_text(f.extent, scope), kPrecMultiplicative + 1);
    if (product.empty() || term.constant != 1)
      product += (product.empty() ? "" : " * ") + std::to_string(term.constant);
    std::string bound = std::to_string(work.min_work);
    for (const lower::ParallelWork::Factor& f : work.scale)
      bound += " * " + wrap(index_text(f.extent, scope), kPrecMultiplicative + 1);
    return "#pragma omp parallel for" + collapse + " if (" + product +
           (work.below ? " < " : " >= ") + bound + ")";
  }
  if (work.terms.empty()) return "#pragma omp parallel for" + collapse;
  std::string sum;
  for (const lower::ParallelWork::Term& term : work.terms) {
    std::string factors;
    for (const lower::ParallelWork::Factor& f : term.factors)
      factors += (factors.empty() ? "" : " * ") +
                 wrap(index_text(f.extent, scope), kPrecMultiplicative + 1);
    sum += (sum.empty() ? "" : " + ") + factors +
           (term.constant == 1 ? "" : " * " + std::to_string(term.constant));
  }
  if (work.constant != 0) sum += " + " + std::to_string(work.constant);
  return "#pragma omp parallel for" + collapse + " if (" + sum +
         " >= " + std::to_string(work.min_work) + ")";
}

void FunctionEmitter::print_block(Code& code, const lower::Block& block, Scope scope) {
  const size_t host_vars = host_vars_.size();  // a C++ block: its locals end with it
  for (const lower::Node& n : block) print_node(code, n, scope);
  host_vars_.resize(host_vars);
}

std::string FunctionEmitter::group_label(const lower::Node& n) {
  std::string text;
  if (n.stmt)  // a statement's code, or a call that computes one (a GEMM, a convolution)
    text = comment_text(*n.stmt);
  else if (n.kind == lower::NodeKind::Comment || n.kind == lower::NodeKind::Note)
    text = n.text;
  else
    for (const lower::Node& inner : n.body)
      if (!(text = group_label(inner)).empty()) break;
  return text.substr(0, text.find('\n'));
}

void FunctionEmitter::print_profiled_body(Code& code, const Scope& outer) {
  Scope scope = outer;
  const size_t host_vars = host_vars_.size();
  code.line("static tenet::profile::Table tenet_profile(" + c_string_literal(fn_.name) + ");");
  int regions = 0;
  bool open = false;
  // A region per group of top-level nodes between blank lines.
  for (const lower::Node& n : lowered_.loops.body) {
    if (n.kind == lower::NodeKind::Blank && open) {
      code.line("tenet_profile.stop();");
      open = false;
    } else if (n.kind != lower::NodeKind::Blank && !open) {
      code.line("tenet_profile.start(" + std::to_string(regions++) + ", " +
                c_string_literal(group_label(n)) + ");");
      open = true;
    }
    print_node(code, n, scope);
  }
  if (open) code.line("tenet_profile.stop();");
  host_vars_.resize(host_vars);
}

void FunctionEmitter::print_node(Code& code, const lower::Node& n, Scope& scope) {
  using lower::NodeKind;
  switch (n.kind) {
    case NodeKind::For:
      return print_for(code, n, scope);
    case NodeKind::Scope:
      code.open("");
      print_block(code, n.body, scope);
      return code.close();
    case NodeKind::If: {
      if (n.condition) {  // one guarded step, as one indented line
        code.line("if (" + emit_expr(n.condition, scope).text + ")");
        return code.line("  " + assign_text(n.body.at(0), scope));
      }
      std::string tests;
      for (const lower::Node::Test& t : n.tests)
        tests += (tests.empty() ? "" : " && ") + var_name(t.var) + (t.lower ? " >= " : " < ") +
                 std::to_string(t.bound);
      code.open("if (" + tests + ")");
      print_block(code, n.body, scope);
      if (!n.orelse.empty()) {
        code.reopen("} else {");
        print_block(code, n.orelse, scope);
      }
      return code.close();
    }
    case NodeKind::Statement:
      return print_statement(code, n, scope);
    case NodeKind::NameScope:
      return print_name_scope(code, n, scope);
    case NodeKind::Let:
      return print_let(code, n, scope);
    case NodeKind::Alias:
      scope.hoisted_values[n.expr.get()] = place_text(n.target, scope);
      return;
    case NodeKind::Array:
      return print_array(code, n);
    case NodeKind::Assign:
      return print_assign(code, n, scope);
    case NodeKind::Comment:
      return code.comment(n.text);
    case NodeKind::Note:
      return code.note(n.text);
    case NodeKind::Blank:
      return code.line("");
    case NodeKind::Call:
      return print_call(code, n, scope);
    case NodeKind::SkipUnlessInBounds:
      return code.line("if (!tenet::in_bounds(" + var_name(n.var) + ", " +
                       index_text(n.index, scope).text +
                       ")) continue;  // no element: the mask never holds");
    case NodeKind::CheckNonEmpty:
      return check_nonempty_dims(code, n.stmt->compute);
    case NodeKind::RaiseIndexFault:
      return code.line(std::string(kIndexFault) + ".raise_if_failed();");
    case NodeKind::CarriedLoop:
      var_names_.resize(std::max(var_names_.size(), size_t(n.var.id) + 1));
      var_names_[size_t(n.var.id)] = loop_vars_.at(n.stmt->loop.get());
      host_vars_.push_back(var_name(n.var));
      emit_loop(code, n, scope);
      host_vars_.pop_back();  // its variable ends with it
      return;
    case NodeKind::Kernel:
      return print_kernel(code, n, scope);
    case NodeKind::GroupReduce:
      return print_group_reduce(code, n);
    case NodeKind::GroupLeader:
      return print_group_leader(code, n, scope);
  }
}

void FunctionEmitter::print_for(Code& code, const lower::Node& n, const Scope& scope) {
  if (n.loop_kind == lower::LoopKind::GpuThread) return print_grid_loop(code, n, scope);
  if (n.loop_kind == lower::LoopKind::GpuLane) return print_lane_loop(code, n, scope);
  declare(n.var);
  const std::string v = var_name(n.var);  // a copy: the body's declarations grow var_names_
  const size_t host_vars = host_vars_.size();
  if (thread_.empty()) host_vars_.push_back(v);
  if (n.loop_kind == lower::LoopKind::Parallel && n.parallel) {
    if (profiled())  // the iterations the threads share
      code.line("tenet::profile::note_pieces(" + index_text(n.end, scope).text + " - " +
                wrap(index_text(n.first, scope), kPrecAdditive + 1) + ");");
    code.line(parallel_text(*n.parallel, scope));
  }
  const bool device = options_.kernels == CppOptions::Kernels::Cuda && !thread_.empty();
  if (n.loop_kind == lower::LoopKind::Unrolled)
    code.line((device ? "#pragma unroll " : "#pragma GCC unroll ") + std::to_string(n.unroll));
  if (n.loop_kind == lower::LoopKind::Simd && !device) code.line("#pragma omp simd");
  const std::string step = n.step ? v + " += " + index_text(n.step, scope).text : "++" + v;
  if (n.reverse) {
    TENET_ASSERT(!n.step && n.loop_kind == lower::LoopKind::Serial, "a reversed loop with a step");
    code.open("for (int64_t " + v + " = " + wrap(index_text(n.end, scope), kPrecAdditive) +
              " - 1; " + v + " >= " + wrap(index_text(n.first, scope), kPrecRelational + 1) +
              "; --" + v + ")");
  } else {
    code.open("for (int64_t " + v + " = " + index_text(n.first, scope).text + "; " + v + " < " +
              wrap(index_text(n.end, scope), kPrecRelational + 1) + "; " + step + ")");
  }
  print_block(code, n.body, scope);
  code.close();
  host_vars_.resize(host_vars);  // its variable ends with it
}

void FunctionEmitter::print_statement(Code& code, const lower::Node& n, const Scope& scope) {
  const ir::Compute& c = n.stmt->compute;
  if (n.resume) {
    Scope& inner = statement_scopes_.at(n.stmt);
    for (const lower::Node& node : n.body) print_node(code, node, inner);
    return;
  }
  code.comment(comment_text(*n.stmt));
  Scope inner = scope;
  inner.statement = c.result->name;
  inner.check_indices = n.check_indices;
  // Indices of loops open outside the region first, then the namer that
  // avoids them, then the statement's own.
  for (const lower::Binding& b : n.bindings)
    if (size_t(b.var.id) < var_names_.size() && !var_names_[size_t(b.var.id)].empty())
      inner.bind(b.index, var_name(b.var), b.lo, b.hi);
  namers_.push_back(
      NameScope{statement_namer(c, inner), n.reserved});  // declare() avoids `reserved`
  for (const lower::Binding& b : n.bindings) {
    declare(b.var);
    inner.bind(b.index, var_name(b.var), b.lo, b.hi);
  }
  for (const lower::Node& node : n.body) print_node(code, node, inner);
  namers_.pop_back();
  statement_scopes_[n.stmt] = inner;
}

void FunctionEmitter::print_name_scope(Code& code, const lower::Node& n, const Scope& scope) {
  Namer names = n.inherit_names && !namers_.empty() ? namers_.back().namer : Namer{};
  for (const ir::Compute* c : n.members) reserve_names(names, *c, scope);
  namers_.push_back(NameScope{std::move(names), n.reserved});
  for (const lower::Var& v : n.declares) declare(v);
  Scope inner = scope;
  for (const lower::Binding& b : n.bindings) inner.bind(b.index, var_name(b.var), b.lo, b.hi);
  for (const lower::Node& node : n.body) print_node(code, node, inner);
  namers_.pop_back();
}

void FunctionEmitter::print_let(Code& code, const lower::Node& n, Scope& scope) {
  declare(n.var);
  const std::string& v = var_name(n.var);
  if (n.index) {
    if (thread_.empty()) host_vars_.push_back(v);
    std::string line = "const int64_t " + v + " = " + index_text(n.index, scope).text;
    for (const auto& [more, value] : n.more) {
      declare(more);
      line += ", " + var_name(more) + " = " + index_text(value, scope).text;
    }
    return code.line(line + ";");
  }
  if (n.computed_dim >= 0) {  // a computed index, checked once here
    Scope at = scope;
    for (const auto& [index, first] : n.not_open)
      at.not_open[index] = size_to_c(first, size_names_).text;
    code.line("const int64_t " + v + " = " +
              computed_index_to_c(*n.expr, size_t(n.computed_dim), at).text + ";");
    scope.hoisted[{n.expr.get(), size_t(n.computed_dim)}] = v;
    return;
  }
  if (n.expr) {  // a value hoisted out of loops, in its statement's names
    Scope at = scope;
    if (n.stmt) {
      for (const lower::Binding& b : n.bindings) at.bind(b.index, var_name(b.var), b.lo, b.hi);
      at.statement = n.stmt->compute.result->name;
      at.check_indices = options_.index_checks && !n.stmt->annotations.reshape;
    }
    code.line("const " + c_type(n.type) + " " + v + " = " + emit_expr(n.expr, at).text + ";");
    scope.hoisted_values[n.expr.get()] = v;
    return;
  }
  // An accumulator and its start.
  code.line((n.wide ? std::string("double") : c_type(n.type)) + " " + v + " = " +
            operand_text(n.source, n.type, scope).text + ";");
}

void FunctionEmitter::print_array(Code& code, const lower::Node& n) {
  if (n.row_of) {
    code.line("alignas(64) " + c_type(n.row_of->type) + " " + access_of(n.row_of).pointer + "[" +
              std::to_string(n.count) + "];");
    return;
  }
  declare(n.var);
  code.line((n.wide ? std::string("double") : c_type(n.type)) + " " + var_name(n.var) + "[" +
            std::to_string(n.count) + "];");
}

void FunctionEmitter::print_assign(Code& code, const lower::Node& n, const Scope& scope) {
  code.line(assign_text(n, scope));
}

std::string FunctionEmitter::assign_text(const lower::Node& n, const Scope& scope) const {
  const std::string target = place_text(n.target, scope);
  const CExpr value = operand_text(n.source, n.compute, scope);
  if (n.op != ir::ReduceOp::None) return reduce_step(n.op, n.compute, target, value);
  std::string text = n.round_double ? "float(" + value.text + ")" : value.text;
  if (n.target.tensor) text = stored(n.target.tensor->type, text);
  return target + " = " + text + ";";
}

void FunctionEmitter::print_call(Code& code, const lower::Node& n, const Scope& scope) {
  switch (n.call) {
    case lower::CallKind::View:
      return emit_view(code, *n.stmt);
    case lower::CallKind::Gemm:
      return emit_gemm(code, n, scope);
    case lower::CallKind::GemmCall:
      return emit_gemm_call(code, n, scope);
    case lower::CallKind::Conv:
      emit_conv(code, *n.stmt);
      if (!n.nested.empty()) print_block(code, n.nested_of(n.stmt), scope);
      return;
  }
}

}  // namespace tenet::codegen::detail
