// Name bindings: what a tensor name means at a point of a body, what a
// statement's target is (fresh, an update of an existing tensor, or an
// error), and the pre-scans that tell a loop which tensors it carries and
// which of its definitions live on after it.
#include <algorithm>
#include <sstream>
#include <unordered_set>

#include "lang/check_internal.h"

namespace tenet::lang::detail {

std::string quote(const std::string& s) {
  return "'" + s + "'";
}

std::string shape_text(ElemType type, const std::vector<ir::SizeExpr>& shape) {
  std::ostringstream os;
  os << type_name(type) << "(";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i].str();
  os << ")";
  return os.str();
}

// ---- Scopes ----------------------------------------------------------------

const Binding* Scopes::find(const std::string& name) const {
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) {
    auto b = it->bindings.find(name);
    if (b != it->bindings.end()) return &b->second;
  }
  return nullptr;
}

void Scopes::bind(const std::string& name, Binding b, bool defining) {
  Block& block = blocks_.back();
  block.bindings[name] = std::move(b);
  if (defining && block.defined.insert(name).second) block.order.push_back(name);
}

// ---- pre-scans ---------------------------------------------------------------

namespace {

void expr_mentions(const ast::Expr* e, std::set<std::string>& out) {
  if (!e) return;
  if (e->kind == ast::ExprKind::Name || e->kind == ast::ExprKind::Access) out.insert(e->name);
  for (const auto& a : e->args) expr_mentions(a.get(), out);
}

}  // namespace

void collect_mentions(const ast::Stmt& s, std::set<std::string>& out) {
  switch (s.kind) {
    case ast::StmtKind::Assign:
      out.insert(s.target.name);
      expr_mentions(s.value.get(), out);
      for (const auto& w : s.where) {
        expr_mentions(w.lo.get(), out);
        expr_mentions(w.hi.get(), out);
      }
      for (const auto& e : s.exists) expr_mentions(e.get(), out);
      break;
    case ast::StmtKind::Call:
      for (const auto& r : s.results) out.insert(r.name);
      for (const auto& a : s.args) out.insert(a.name);
      break;
    case ast::StmtKind::For:
      for (const auto& b : s.body)
        if (b) collect_mentions(*b, out);
      break;
  }
}

// The first statement (in program order, inside loops too) that mentions
// `name`, or null.
static const ast::Stmt* first_mention(const std::vector<ast::StmtPtr>& stmts,
                                      const std::string& name) {
  for (const auto& s : stmts) {
    if (!s) continue;
    if (s->kind == ast::StmtKind::For) {
      if (const ast::Stmt* inner = first_mention(s->body, name)) return inner;
      continue;
    }
    std::set<std::string> names;
    collect_mentions(*s, names);
    if (names.count(name)) return s.get();
  }
  return nullptr;
}

bool updates_caller_output(const ast::Function& fn, const ast::Output& o) {
  if (!o.declared) return false;
  const ast::Stmt* first = first_mention(fn.body, o.name.name);
  return first && first->kind == ast::StmtKind::Assign && first->target.name == o.name.name &&
         ast::accumulates(first->op);
}

namespace {

void collect_assigned(const std::vector<ast::StmtPtr>& stmts, std::vector<std::string>& out,
                      std::unordered_set<std::string>& seen) {
  auto add = [&](const std::string& name) {
    if (seen.insert(name).second) out.push_back(name);
  };
  for (const auto& s : stmts) {
    if (!s) continue;
    switch (s->kind) {
      case ast::StmtKind::Assign:
        add(s->target.name);
        break;
      case ast::StmtKind::Call:
        for (const auto& r : s->results) add(r.name);
        break;
      case ast::StmtKind::For:
        collect_assigned(s->body, out, seen);
        break;
    }
  }
}

}  // namespace

void collect_assigned(const std::vector<ast::StmtPtr>& stmts, std::vector<std::string>& out) {
  std::unordered_set<std::string> seen(out.begin(), out.end());
  collect_assigned(stmts, out, seen);
}

void index_names(const ast::Expr& e, bool in_index, std::vector<const ast::Expr*>& out) {
  if (in_index && e.kind == ast::ExprKind::Name) out.push_back(&e);
  bool args_are_indices = in_index || e.kind == ast::ExprKind::Access;
  for (const auto& a : e.args)
    if (a) index_names(*a, args_are_indices, out);
}

void collect_loop_vars(const std::vector<ast::StmtPtr>& stmts, std::set<std::string>& out) {
  for (const auto& s : stmts) {
    if (!s || s->kind != ast::StmtKind::For) continue;
    out.insert(s->var.name);
    collect_loop_vars(s->body, out);
  }
}

namespace {

void bound_names(const ast::Expr* e, std::vector<const ast::Expr*>& out) {
  if (!e) return;
  if (e->kind == ast::ExprKind::Name) out.push_back(e);
  for (const auto& a : e->args) bound_names(a.get(), out);
}

void collect_where_sizes(const std::vector<ast::StmtPtr>& stmts,
                         const std::set<std::string>& not_sizes, std::vector<ast::Ident>& out,
                         std::unordered_set<std::string>& seen) {
  for (const auto& s : stmts) {
    if (!s) continue;
    if (s->kind == ast::StmtKind::For) collect_where_sizes(s->body, not_sizes, out, seen);
    if (s->kind != ast::StmtKind::Assign || s->where.empty()) continue;
    // The statement's own indices are not sizes ('where k in 0:i' is an error later).
    std::set<std::string> own;
    for (const ast::Ident& i : s->indices) own.insert(i.name);
    for (const ast::RangeClause& w : s->where) own.insert(w.index.name);
    std::vector<const ast::Expr*> names;
    if (s->value) index_names(*s->value, false, names);
    for (const ast::ExprPtr& e : s->exists) index_names(*e, false, names);
    for (const ast::Expr* n : names) own.insert(n->name);
    names.clear();
    for (const ast::RangeClause& w : s->where) {
      bound_names(w.lo.get(), names);
      bound_names(w.hi.get(), names);
    }
    for (const ast::Expr* n : names) {
      if (own.count(n->name) || not_sizes.count(n->name) || ast::is_builtin(n->name)) continue;
      if (seen.insert(n->name).second) out.push_back(ast::Ident{n->name, n->span});
    }
  }
}

}  // namespace

void collect_where_sizes(const std::vector<ast::StmtPtr>& stmts,
                         const std::set<std::string>& not_sizes, std::vector<ast::Ident>& out) {
  std::unordered_set<std::string> seen;
  for (const ast::Ident& o : out) seen.insert(o.name);
  collect_where_sizes(stmts, not_sizes, out, seen);
}

// ---- targets -----------------------------------------------------------------

const LoopVar* Lowerer::find_loop(const std::string& name) const {
  for (auto it = loops_.rbegin(); it != loops_.rend(); ++it)
    if (it->name == name) return &*it;
  return nullptr;
}

const ast::Function* Lowerer::find_function(const std::string& name) const {
  return module_.find(name);
}

// A tensor (or index or loop variable: `what`) may not be named like a size
// parameter, a loop variable, a function or a builtin.
bool Lowerer::name_clashes(const ast::Ident& name, const char* what) {
  auto redefinition = [&](const std::string& is, Span previous, const std::string& note) {
    Diagnostic& d = error(name.span, std::string("redefinition of ") + quote(name.name) + ": " +
                                         what + " cannot have the name of " + is);
    if (previous.valid) d.notes.push_back({previous, note});
    return true;
  };
  if (env_.sizes.count(name.name)) {
    auto it = env_.size_decl.find(name.name);
    return redefinition("a size parameter", it == env_.size_decl.end() ? Span{} : it->second,
                        quote(name.name) + " is a size parameter here");
  }
  if (const LoopVar* l = find_loop(name.name))
    return redefinition("a loop variable", l->span,
                        "the loop over " + quote(name.name) + " is here");
  if (const ast::Function* f = find_function(name.name))
    return redefinition("a function", f->name.span, "the function is defined here");
  if (ast::is_builtin(name.name)) return redefinition("a builtin function", {}, "");
  return false;
}

Lowerer::Target Lowerer::resolve_target(const ast::Ident& name, ast::AssignOp op) {
  Target t;
  if (name_clashes(name, "a tensor")) return t;
  const Binding* existing = scopes_.find(name.name);
  if (existing && existing->is_input) {
    Diagnostic& d = error(name.span, "cannot assign to input " + quote(name.name));
    d.notes.push_back({existing->decl, quote(name.name) + " is an input of " +
                                           quote(env_.fn->name.name) +
                                           "; give the result "
                                           "another name"});
    return t;
  }
  if (ast::accumulates(op)) {
    if (!existing) {
      std::string text = ast::assign_op_text(op);
      Diagnostic& d =
          error(name.span, quote(text) + " accumulates onto an existing tensor, but " +
                               quote(name.name) + " is not defined; use " +
                               quote(text.substr(0, text.size() - 1) + "=!") + " to define it");
      for (const ast::Output& o : env_.fn->outputs)
        if (o.name.name == name.name && !o.declared)
          d.notes.push_back({o.name.span, "or, to accumulate into the caller's " +
                                              quote(name.name) +
                                              ", declare this output with its type and shape "
                                              "(e.g. float(N) " +
                                              name.name + ")"});
      t.kind = Target::Invalid;
      return t;
    }
    t.kind = Target::Update;
    t.existing = *existing;
    return t;
  }
  if (existing) {
    // A redefinition (a new SSA version of a tensor of this block) or, in a
    // loop body, a loop-carried tensor: either way it keeps rank, shape and type.
    t.kind = Target::Update;
    t.existing = *existing;
    return t;
  }
  t.kind = Target::Fresh;
  for (const ast::Output& o : env_.fn->outputs)
    if (o.name.name == name.name && o.declared) t.declared = &o;
  return t;
}

// Binds a statement's or call's result. `accumulate` (+=) keeps the earlier
// definition as the one later redefinitions point to.
void Lowerer::bind_result(const ast::Ident& name, const Target& t, const ir::ValuePtr& value,
                          int rank, bool accumulate) {
  if (!value) failed_ = true;
  if (t.kind == Target::Invalid) {
    // Keep an undefined name from causing "unknown name" errors later.
    if (!scopes_.find(name.name) && !env_.sizes.count(name.name) && !find_loop(name.name) &&
        !find_function(name.name))
      scopes_.bind(name.name, Binding{nullptr, rank, name.span, false}, true);
    return;
  }
  Binding b{value, rank, name.span, false};
  if (accumulate) b.decl = t.existing.decl;
  scopes_.bind(name.name, std::move(b), !accumulate);
}

}  // namespace tenet::lang::detail
