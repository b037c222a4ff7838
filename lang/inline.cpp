// Call statements `(p, q) = f(a, b)`: the callee is checked on its own first
// (once); then its body is lowered again into the caller's builder with its
// parameters bound to the arguments and its size parameters to the
// arguments' sizes. Inlining re-lowers the AST (rather than cloning the
// callee's IR) so that every size, range and index name is computed afresh
// in the caller's terms. Problems that only the call's sizes reveal (a range
// that becomes empty, a read that becomes provably out of bounds) are
// reported at the call, with the callee's diagnostic as notes.
#include <algorithm>

#include "lang/check_internal.h"

namespace tenet::lang::detail {

namespace {

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

// Binds the callee's size parameters to the argument shapes, checking ranks,
// element types and sizes. Fills env.sizes.
bool Lowerer::bind_call_sizes(const ast::Stmt& s, const ast::Function& callee,
                              const std::vector<ir::ValuePtr>& args, FunctionEnv& env) {
  bool ok = true;
  std::map<std::string, std::string> bound_by;  // size name -> "dimension 0 of 'a'"
  for (size_t i = 0; i < callee.params.size(); ++i) {
    const ast::Param& p = callee.params[i];
    const ir::ValuePtr& arg = args[i];
    const ast::Ident& a = s.args[i];
    Span param_span = Span::join(p.type_span, p.name.span);
    size_t rank = p.scalar ? 0 : p.dims.size();
    if (size_t(arg->rank()) != rank) {
      Diagnostic& d =
          error(a.span, "rank mismatch: argument " + quote(a.name) + " has rank " +
                            std::to_string(arg->rank()) + " but parameter " + quote(p.name.name) +
                            " of " + quote(callee.name.name) + " has rank " + std::to_string(rank));
      d.notes.push_back({param_span, quote(p.name.name) + " is declared here"});
      ok = false;
      continue;
    }
    if (arg->type != p.type) {
      Diagnostic& d = error(a.span, "type mismatch: argument " + quote(a.name) + " is " +
                                        std::string(type_name(arg->type)) + " but parameter " +
                                        quote(p.name.name) + " of " + quote(callee.name.name) +
                                        " is " + std::string(type_name(p.type)));
      d.notes.push_back({param_span, quote(p.name.name) + " is declared here"});
      ok = false;
      continue;
    }
    for (size_t k = 0; k < rank; ++k) {
      const ast::Dim& dim = p.dims[k];
      const ir::SizeExpr& size = arg->shape[k];
      std::string where = "dimension " + std::to_string(k) + " of " + quote(a.name);
      std::string problem;
      if (dim.name.empty()) {
        if (size != ir::SizeExpr(dim.value))
          problem = where + " has size " + size.str() + " but " + quote(callee.name.name) +
                    " needs " + std::to_string(dim.value);
      } else if (auto it = env.sizes.find(dim.name); it == env.sizes.end()) {
        env.sizes[dim.name] = size;
        bound_by[dim.name] = where;
      } else if (it->second != size) {
        problem = where + " has size " + size.str() + " but " + quote(callee.name.name) +
                  " needs its size parameter " + quote(dim.name) + ", which " + bound_by[dim.name] +
                  " set to " + it->second.str();
      }
      if (problem.empty()) continue;
      Diagnostic& d =
          error(a.span, "size mismatch in the call to " + quote(callee.name.name) + ": " + problem);
      d.notes.push_back({dim.span, "parameter " + quote(p.name.name) + " of " +
                                       quote(callee.name.name) + " is declared here"});
      ok = false;
    }
  }
  return ok;
}

void Lowerer::call(const ast::Stmt& s) {
  const ast::Function* callee = find_function(s.callee.name);
  bool ok = true;
  const std::vector<Target> targets = call_targets(s, ok);
  if (!callee) {
    error(s.callee.span, "unknown function " + quote(s.callee.name));
    return give_up_call(s, targets);
  }
  const std::vector<ir::ValuePtr> args = call_args(s, *callee, ok);
  if (!call_arity_ok(s, *callee)) return give_up_call(s, targets);
  const ModuleChecker::Entry* standalone =
      module_.checked(callee->name.name, s.callee, *env_.diags);
  if (!ok || !standalone ||
      !call_within_limits(s, *callee, standalone->statements, standalone->call_height))
    return give_up_call(s, targets);
  std::optional<FunctionEnv> inner_env = callee_env(s, *callee, args, standalone->ir.size_params);
  if (!inner_env) return give_up_call(s, targets);

  Diagnostics inner_diags(file());
  inner_env->diags = &inner_diags;
  Lowerer inner(module_, std::move(*inner_env));
  for (size_t i = 0; i < callee->params.size(); ++i)
    inner.bind_input(callee->params[i].name.name, args[i],
                     Span::join(callee->params[i].type_span, callee->params[i].name.span));
  if (!bind_updated_outputs(s, *callee, targets, inner)) return give_up_call(s, targets);
  std::vector<ir::ValuePtr> outs = inner.run();
  statements_ += inner.statements();
  call_height_ = std::max(call_height_, 1 + inner.call_height());
  report_in_call(s, *callee, inner_diags);
  if (inner.failed()) return give_up_call(s, targets);
  bind_call_results(s, *callee, targets, outs);
}

// The results are targets like the left side of an assignment.
std::vector<Lowerer::Target> Lowerer::call_targets(const ast::Stmt& s, bool& ok) {
  std::vector<Target> targets;
  for (size_t i = 0; i < s.results.size(); ++i) {
    bool repeated = false;
    for (size_t j = 0; j < i; ++j) repeated |= s.results[j].name == s.results[i].name;
    if (repeated) {
      error(s.results[i].span,
            "redefinition of " + quote(s.results[i].name) + ": it appears twice among the results");
      targets.emplace_back();
      ok = false;
      continue;
    }
    targets.push_back(resolve_target(s.results[i], ast::AssignOp::Assign));
    ok &= targets.back().kind != Target::Invalid;
  }
  return targets;
}

std::vector<ir::ValuePtr> Lowerer::call_args(const ast::Stmt& s, const ast::Function& callee,
                                             bool& ok) {
  std::vector<ir::ValuePtr> args;
  for (const ast::Ident& a : s.args) {
    const Binding* b = scopes_.find(a.name);
    if (!b) {
      bool known = env_.sizes.count(a.name) || find_loop(a.name);
      error(a.span, known ? "argument " + quote(a.name) + " of " + quote(callee.name.name) +
                                " must be a tensor"
                          : "unknown name " + quote(a.name));
      ok = false;
    } else if (!b->ok()) {
      ok = false;
    }
    args.push_back(b ? b->value : nullptr);
  }
  return args;
}

bool Lowerer::call_arity_ok(const ast::Stmt& s, const ast::Function& callee) {
  const Span def = callee.name.span;
  if (s.args.size() != callee.params.size()) {
    Diagnostic& d = error(s.callee.span, quote(callee.name.name) + " takes " +
                                             plural(callee.params.size(), "argument", "arguments") +
                                             ", " + std::to_string(s.args.size()) + " given");
    d.notes.push_back({def, quote(callee.name.name) + " is defined here"});
    return false;
  }
  if (s.results.size() != callee.outputs.size()) {
    Diagnostic& d = error(s.callee.span, quote(callee.name.name) + " returns " +
                                             plural(callee.outputs.size(), "result", "results") +
                                             ", " + std::to_string(s.results.size()) + " taken");
    d.notes.push_back({def, quote(callee.name.name) + " is defined here"});
    return false;
  }
  return true;
}

// Limits, checked before inlining so that the work stays bounded. The
// callee's own inlining was checked when it was checked on its own, so
// these never fail inside inlined code (where they would be reported once
// per enclosing call).
bool Lowerer::call_within_limits(const ast::Stmt& s, const ast::Function& callee,
                                 int64_t statements, int call_height) {
  if (env_.call_depth + 1 + call_height > kMaxCallDepth) {
    error(s.callee.span, "calls nest too deeply (more than " + std::to_string(kMaxCallDepth) +
                             " levels of calls inside calls)");
    return false;
  }
  if (env_.call_depth == 0 && !module_.spend_inline_budget(statements)) {
    error(s.span, "inlining " + quote(callee.name.name) + " here makes the program too large (" +
                      std::to_string(kMaxInlinedStatements) +
                      " inlined statements at most, for all calls together)");
    return false;
  }
  return true;
}

std::optional<FunctionEnv> Lowerer::callee_env(const ast::Stmt& s, const ast::Function& callee,
                                               const std::vector<ir::ValuePtr>& args,
                                               const std::vector<std::string>& size_params) {
  FunctionEnv inner_env;
  inner_env.fn = &callee;
  inner_env.fb = env_.fb;
  inner_env.reserved = ir_loop_vars_;
  inner_env.call_depth = env_.call_depth + 1;
  if (!bind_call_sizes(s, callee, args, inner_env)) return std::nullopt;
  bool ok = true;
  for (const std::string& size : size_params) {
    if (inner_env.sizes.count(size)) continue;
    Diagnostic& d =
        error(s.callee.span, "size parameter " + quote(size) + " of " + quote(callee.name.name) +
                                 " is not bound by any argument");
    d.notes.push_back({callee.name.span, quote(callee.name.name) + " is defined here"});
    ok = false;
  }
  if (!ok) return std::nullopt;
  for (size_t i = 0; i < s.results.size(); ++i) {
    bool is_param = false;
    for (const ast::Param& p : callee.params)
      is_param |= p.name.name == callee.outputs[i].name.name;
    if (!is_param) inner_env.rename[callee.outputs[i].name.name] = s.results[i].name;
  }
  return inner_env;
}

// An output the callee updates (`y(i) += ...` onto its declared output)
// starts from the caller's tensor that receives it.
bool Lowerer::bind_updated_outputs(const ast::Stmt& s, const ast::Function& callee,
                                   const std::vector<Target>& targets, Lowerer& inner) {
  for (size_t i = 0; i < s.results.size(); ++i) {
    const ast::Output& o = callee.outputs[i];
    if (!updates_caller_output(callee, o)) continue;
    const Target& t = targets[i];
    if (t.kind != Target::Update) {
      Diagnostic& d = error(s.results[i].span,
                            quote(callee.name.name) + " updates its output " + quote(o.name.name) +
                                ", which starts from the caller's values, so " +
                                quote(s.results[i].name) + " must be defined before the call");
      d.notes.push_back({o.name.span, quote(o.name.name) + " is declared here"});
      return false;
    }
    if (!t.existing.ok()) return false;
    inner.bind_initial(o.name.name, t.existing.value, t.existing.decl);
  }
  return true;
}

void Lowerer::report_in_call(const ast::Stmt& s, const ast::Function& callee,
                             const Diagnostics& inner) {
  if (!inner.has_errors()) return;
  for (const Diagnostic& d : inner.all()) {
    if (d.severity != Severity::Error) continue;  // the callee's own check reported it
    Diagnostic& wrapped =
        error(s.span, "in this call to " + quote(callee.name.name) + ": " + d.message);
    wrapped.notes.push_back({d.span, "the problem is here, with the sizes of this call"});
    wrapped.notes.insert(wrapped.notes.end(), d.notes.begin(), d.notes.end());
  }
}

void Lowerer::bind_call_results(const ast::Stmt& s, const ast::Function& callee,
                                const std::vector<Target>& targets,
                                const std::vector<ir::ValuePtr>& outs) {
  for (size_t i = 0; i < s.results.size(); ++i) {
    const Target& t = targets[i];
    ir::ValuePtr v = outs[i];
    if (t.kind == Target::Update && t.existing.ok() &&
        (t.existing.value->type != v->type || t.existing.value->shape != v->shape)) {
      Diagnostic& d = error(s.results[i].span,
                            std::string(t.existing.value->type != v->type ? "type" : "size") +
                                " mismatch: " + quote(s.results[i].name) + " is " +
                                shape_text(t.existing.value->type, t.existing.value->shape) +
                                " but result " + std::to_string(i) + " of " +
                                quote(callee.name.name) + " is " + shape_text(v->type, v->shape));
      d.notes.push_back({t.existing.decl, quote(s.results[i].name) + " is defined here"});
      v = nullptr;
    }
    bind_result(s.results[i], t, v, outs[i] ? outs[i]->rank() : -1, false);
  }
}

void Lowerer::give_up_call(const ast::Stmt& s, const std::vector<Target>& targets) {
  failed_ = true;
  for (size_t i = 0; i < s.results.size(); ++i)
    bind_result(s.results[i], targets[i], nullptr, -1, false);
}

}  // namespace tenet::lang::detail
