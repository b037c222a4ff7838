// Assignment statements and loops: the rules of check.cpp (names, SSA
// definitions, reductions, ranges, types) applied to one statement, then
// lowered to one Compute; loops lowered with their carried tensors and
// live-outs.
#include <cmath>
#include <utility>

#include "ir/builder.h"
#include "lang/check_internal.h"
#include "support/error.h"

namespace tenet::lang::detail {

namespace {

bool reads_tensor(const ast::Expr& e) {
  if (e.kind == ast::ExprKind::Access) return true;
  for (const auto& a : e.args)
    if (a && reads_tensor(*a)) return true;
  return false;
}

/// The first index of `st` that `e` names (`i` in `0:i + 1`), or null.
const ast::Expr* index_named(const ast::Expr& e, const StmtInfo& st) {
  if (e.kind == ast::ExprKind::Name && st.index_of.count(e.name)) return &e;
  for (const auto& a : e.args)
    if (const ast::Expr* found = a ? index_named(*a, st) : nullptr) return found;
  return nullptr;
}

ir::ReduceOp reduce_op(ast::AssignOp op) {
  switch (op) {
    case ast::AssignOp::Assign:
      return ir::ReduceOp::None;
    case ast::AssignOp::SumReduce:
    case ast::AssignOp::Accumulate:
      return ir::ReduceOp::Sum;
    case ast::AssignOp::MaxReduce:
    case ast::AssignOp::MaxAccumulate:
      return ir::ReduceOp::Max;
    case ast::AssignOp::MinReduce:
    case ast::AssignOp::MinAccumulate:
      return ir::ReduceOp::Min;
    case ast::AssignOp::ProdReduce:
    case ast::AssignOp::ProdAccumulate:
      return ir::ReduceOp::Prod;
  }
  return ir::ReduceOp::None;
}

}  // namespace

Lowerer::Lowerer(ModuleChecker& module, FunctionEnv env)
    : module_(module), env_(std::move(env)), ir_loop_vars_(env_.reserved) {
  scopes_.push();
}

Diagnostic& Lowerer::error(Span span, std::string message) {
  failed_ = true;
  return env_.diags->error(span, std::move(message));
}

Diagnostic& Lowerer::warning(Span span, std::string message) {
  return env_.diags->warning(span, std::move(message));
}

std::string Lowerer::text(Span span) const {
  return std::string(file().slice(span));
}

void Lowerer::bind_input(const std::string& name, const ir::ValuePtr& value, Span decl) {
  scopes_.bind(name, Binding{value, value ? value->rank() : -1, decl, true}, true);
}

void Lowerer::bind_initial(const std::string& name, const ir::ValuePtr& value, Span decl) {
  scopes_.bind(name, Binding{value, value ? value->rank() : -1, decl, false}, true);
}

std::vector<ir::ValuePtr> Lowerer::run() {
  std::set<std::string> outputs_used;
  for (const ast::Output& o : env_.fn->outputs) outputs_used.insert(o.name.name);
  block(env_.fn->body, LaterNames{nullptr, &outputs_used, nullptr, 0});
  return outputs();
}

// `later`: the names mentioned after this block (a loop keeps as live-outs
// only the definitions of its body that are mentioned later).
void Lowerer::block(const std::vector<ast::StmtPtr>& stmts, const LaterNames& later) {
  std::unordered_map<std::string, size_t> last_mention;
  std::set<std::string> mentioned;
  for (size_t k = 0; k < stmts.size(); ++k) {
    if (!stmts[k]) continue;
    mentioned.clear();
    collect_mentions(*stmts[k], mentioned);
    for (const std::string& name : mentioned) last_mention[name] = k;
  }
  for (size_t k = 0; k < stmts.size(); ++k)
    if (stmts[k]) statement(*stmts[k], LaterNames{&later, nullptr, &last_mention, k});
}

void Lowerer::statement(const ast::Stmt& s, const LaterNames& later) {
  switch (s.kind) {
    case ast::StmtKind::Assign:
      assign(s);
      break;
    case ast::StmtKind::Call:
      if (s.is_reshape())
        reshape(s);
      else
        call(s);
      break;
    case ast::StmtKind::For:
      for_loop(s, later);
      break;
  }
}

// Declares the statement's index variables: the left side, names inside the
// index expressions of reads, and where-clause names; gives each an IR name
// that no enclosing loop variable uses.
bool Lowerer::collect_indices(StmtInfo& st) {
  const ast::Stmt& s = *st.stmt;
  bool ok = true;
  auto add = [&](const ast::Ident& id, bool lhs) {
    if (name_clashes(id, "an index")) return false;
    if (const Binding* b = scopes_.find(id.name)) {
      Diagnostic& d = error(id.span, "redefinition of " + quote(id.name) +
                                         ": an index cannot have the name of a tensor");
      d.notes.push_back({b->decl, quote(id.name) + " is defined here"});
      return false;
    }
    RangeIndex ix;
    ix.name = id.name;
    ix.span = id.span;
    ix.on_lhs = lhs;
    st.index_of[id.name] = int(st.indices.size());
    st.indices.push_back(std::move(ix));
    return true;
  };
  std::set<std::string> rejected;  // reported once, then ignored
  for (const ast::Ident& id : s.indices) {
    if (auto it = st.index_of.find(id.name); it != st.index_of.end()) {
      Diagnostic& d = error(id.span, "index " + quote(id.name) + " appears twice on the left of " +
                                         quote(s.target.name));
      d.notes.push_back({st.indices[it->second].span, "first use is here"});
      ok = false;
      continue;
    }
    if (rejected.count(id.name) || !add(id, true)) {
      rejected.insert(id.name);
      ok = false;
    }
  }
  std::vector<const ast::Expr*> names;
  if (s.value) index_names(*s.value, false, names);
  for (const ast::ExprPtr& e : s.exists) index_names(*e, false, names);
  for (const ast::Expr* n : names) {
    // A tensor's name inside an index reads it (a computed index: x(s), s a scalar).
    if (st.index_of.count(n->name) || env_.sizes.count(n->name) || find_loop(n->name) ||
        rejected.count(n->name) || scopes_.find(n->name))
      continue;
    if (!add(ast::Ident{n->name, n->span}, false)) {
      rejected.insert(n->name);
      ok = false;
    }
  }
  for (const ast::RangeClause& w : s.where) {
    if (st.index_of.count(w.index.name) || rejected.count(w.index.name)) continue;
    if (!add(w.index, false)) ok = false;
  }
  if (st.indices.size() > size_t(kMaxIndices)) {
    error(st.indices[size_t(kMaxIndices)].span,
          "too many indices: the statement defining " + quote(s.target.name) + " has " +
              std::to_string(st.indices.size()) + ", the limit is " + std::to_string(kMaxIndices) +
              " (each index is a loop of the generated code)");
    return false;
  }
  // IR names: an index may not reuse an enclosing loop variable's name.
  std::set<std::string> taken = ir_loop_vars_;
  for (const RangeIndex& ix : st.indices) taken.insert(ix.name);
  for (RangeIndex& ix : st.indices) {
    ix.ir_name = ix.name;
    for (int k = 1; ir_loop_vars_.count(ix.ir_name); ++k) {
      std::string candidate = ix.name + "_" + std::to_string(k);
      if (!taken.count(candidate)) {
        ix.ir_name = candidate;
        taken.insert(candidate);
      }
    }
  }
  return ok;
}

bool Lowerer::where_clauses(StmtInfo& st) {
  bool ok = true;
  for (const ast::RangeClause& w : st.stmt->where) {
    auto it = st.index_of.find(w.index.name);
    if (it == st.index_of.end()) {
      ok = false;  // rejected by collect_indices
      continue;
    }
    RangeIndex& ix = st.indices[it->second];
    if (ix.where) {
      Diagnostic& d = error(w.span, "index " + quote(w.index.name) + " has two where clauses");
      d.notes.push_back({ix.where_span, "the first one is here"});
      ok = false;
      continue;
    }
    if (w.lo && w.hi &&
        (reads_tensor(*w.lo) || reads_tensor(*w.hi) || index_named(*w.lo, st) ||
         index_named(*w.hi, st))) {
      ok &= data_bound(st, w, ix);
      continue;
    }
    auto lo = w.lo ? size_expr(*w.lo, "the bounds of a where clause", &st) : std::nullopt;
    auto hi = w.hi ? size_expr(*w.hi, "the bounds of a where clause", &st) : std::nullopt;
    if (!lo || !hi) {
      ok = false;
      continue;
    }
    st.indices[it->second].where = std::pair{*lo, *hi};
    st.indices[it->second].where_span = w.span;
  }
  return ok;
}

bool Lowerer::data_bound(StmtInfo& st, const ast::RangeClause& w, const RangeIndex& ix) {
  // A bound that names another index (`k in 0:i + 1`, a triangle) masks the
  // body like one that reads a tensor: the range comes from k's other uses.
  const ast::Expr* index = index_named(*w.lo, st);
  if (!index) index = index_named(*w.hi, st);
  if (ix.on_lhs) {
    error(w.span, "the range of output index " + quote(w.index.name) + " cannot depend on " +
                      (index ? "index " + quote(index->name) : std::string("tensor values")) +
                      ": an output has one shape");
    return false;
  }
  if (index && index->name == w.index.name) {
    error(index->span, "the range of index " + quote(w.index.name) + " cannot depend on itself");
    return false;
  }
  bool ok = true;
  for (const ast::Expr* bound : {w.lo.get(), w.hi.get()})
    ok &= integer(*bound, infer(*bound, st), "a bound of a where clause");
  st.data_bounds.push_back({ix.ir_name, w.lo.get(), w.hi.get()});
  return ok;
}

void Lowerer::assign(const ast::Stmt& s) {
  StmtInfo st;
  st.stmt = &s;
  bool accumulate = ast::accumulates(s.op);
  if (s.equivalent)
    warning(s.equivalent_span,
            "the reduction hint '<=> ...' is ignored: Tenet chooses how to compute "
            "reductions itself");
  Target t = resolve_target(s.target, s.op);
  int rank = int(s.indices.size());
  bool ok = t.kind != Target::Invalid;
  const Binding* existing = t.kind == Target::Update ? &t.existing : nullptr;
  if (existing && existing->rank >= 0 && existing->rank != rank) {
    Diagnostic& d =
        error(s.target.span, "rank mismatch: " + quote(s.target.name) + " has rank " +
                                 std::to_string(existing->rank) + " but is indexed with " +
                                 std::to_string(rank) + " indices");
    d.notes.push_back({existing->decl, quote(s.target.name) + " is defined here"});
    ok = false;
  }
  if (t.declared && t.declared->dims.size() != size_t(rank)) {
    Diagnostic& d = error(
        s.target.span, "rank mismatch: output " + quote(s.target.name) + " is declared with rank " +
                           std::to_string(t.declared->dims.size()) + " but is indexed with " +
                           std::to_string(rank) + " indices");
    d.notes.push_back({t.declared->name.span, "the output is declared here"});
    ok = false;
  }
  ok &= collect_indices(st);
  ok &= where_clauses(st);
  if (s.value) infer(*s.value, st);
  for (const ast::ExprPtr& e : s.exists) infer(*e, st);  // reads for range inference only
  ok &= !st.poisoned && s.value != nullptr;

  // Left-side indices of an existing or declared tensor take its dimensions.
  for (size_t p = 0; ok && p < s.indices.size(); ++p) {
    RangeIndex& ix = st.indices[p];
    std::optional<ir::SizeExpr> dim;
    if (existing && existing->ok()) dim = existing->value->shape[p];
    if (t.declared) dim = declared_dim(t.declared->dims[p]);
    if (!dim) continue;
    ix.target_dim = *dim;
    ix.target_span = ix.span;
    ix.target_what = "dimension " + std::to_string(p) + " of " + quote(s.target.name);
  }

  // Which indices are reduced: exactly the right-only ones (none is fine: a
  // reduction over nothing starts from its identity and combines the value once).
  const RangeIndex* right_only = nullptr;
  for (const RangeIndex& ix : st.indices)
    if (!ix.on_lhs && !right_only) right_only = &ix;
  if (s.op == ast::AssignOp::Assign && right_only) {
    Diagnostic& d = error(right_only->span, "index " + quote(right_only->name) +
                                                " appears only on the right of '='; use '+=!' "
                                                "to sum over it");
    d.notes.push_back({s.op_span, "'=' assigns element-wise: every index must be on the left"});
    ok = false;
  }

  if (ok) {
    std::map<std::string, int64_t> trips;
    for (const LoopVar& l : loops_) trips[l.ir_name] = l.trip;
    ok = infer_ranges(st.indices, st.reads, trips, *env_.diags);
    if (!ok) failed_ = true;
  }
  std::optional<ElemType> type;
  if (ok) type = result_type(st, existing, t.declared);
  if (type && !st.data_bounds.empty() && !ir::make_identity(reduce_op(s.op), *type)) {
    error(s.op_span, "a ragged range (a where clause read from a tensor) cannot mask a '" +
                         std::string(ast::assign_op_text(s.op)) + "' reduction of " +
                         std::string(type_name(*type)) +
                         ": its start, 2^64 - 1, is not a constant of the IR");
    type.reset();
  }
  ir::ValuePtr value;
  if (type) value = emit_assign(st, existing, *type);
  if (!value) failed_ = true;
  bind_result(s.target, t, value, rank, accumulate);
}

std::optional<ElemType> Lowerer::result_type(const StmtInfo& st, const Binding* existing,
                                             const ast::Output* declared) {
  const ast::Stmt& s = *st.stmt;
  Ty ty = st.nodes.at(s.value.get()).ty;
  // Only a cast `float16(e)` makes a float16 tensor; a copy `t(i) = h(i)` of one is float32.
  if (ty.is(ElemType::F16) && s.value->kind != ast::ExprKind::Cast)
    ty = Ty::concrete(ElemType::F32);
  std::optional<ElemType> target;
  if (existing && existing->ok()) target = existing->value->type;
  if (declared) target = declared->type;
  if (ty.kind == Ty::Literal) {
    ElemType t = target.value_or(ElemType::F32);
    if (is_int(t) && !ty.int_ok) {
      error(s.value->span, "type mismatch: " + quote(s.target.name) + " is " +
                               std::string(type_name(t)) + " but the right side is not an integer");
      return std::nullopt;
    }
    return t;
  }
  const ElemType result = target.value_or(ty.type);
  if (result == ElemType::Bool && s.op != ast::AssignOp::Assign) {
    Diagnostic& d = error(s.op_span, quote(s.target.name) + " is bool; '" +
                                         ast::assign_op_text(s.op) + "' cannot combine bools");
    d.notes.push_back({s.value->span, "count or combine them as numbers: 'int32(" +
                                          text(s.value->span) + ")', or with && and ||"});
    return std::nullopt;
  }
  if (!target || *target == ty.type) return ty.type;
  if (compute_type(*target) == compute_type(ty.type)) return *target;  // float16 stores round
  if (ty.is(ElemType::Bool)) return *target;                           // 0 or 1
  // TC's promotion at the statement level: an integer right side (an index,
  // a size, an integer tensor) onto a float tensor is converted to its type.
  if (is_float(*target) && is_int(ty.type)) return *target;
  if (existing && is_int(*target) && is_int(ty.type) && byte_size(*target) > byte_size(ty.type) &&
      (is_unsigned(ty.type) || !is_unsigned(*target)))
    return *target;  // an integer update widens to the tensor's type
  Diagnostic& d =
      error(s.value->span, "type mismatch: " + std::string(declared ? "output " : "") +
                               quote(s.target.name) + " is " + std::string(type_name(*target)) +
                               " but the right side is " + std::string(type_name(ty.type)));
  d.notes.push_back({declared ? declared->name.span : existing->decl,
                     quote(s.target.name) + (declared ? " is declared here" : " is defined here")});
  return std::nullopt;
}

ir::ValuePtr Lowerer::emit_assign(StmtInfo& st, const Binding* existing, ElemType type) {
  const ast::Stmt& s = *st.stmt;
  std::vector<ir::Dim> out, reduce;
  for (const RangeIndex& ix : st.indices)
    (ix.on_lhs ? out : reduce).push_back(ir::Dim{ix.ir_name, ix.lo, ix.hi});
  ir::ValuePtr init;
  if (ast::accumulates(s.op)) init = existing->value;
  auto renamed = env_.rename.find(s.target.name);
  const std::string& name = renamed == env_.rename.end() ? s.target.name : renamed->second;
  ++statements_;
  // A float16 tensor's body is float32 (rounded when stored); the cast of a
  // right side `float16(e)` is that rounding.
  const ast::Expr* value = s.value.get();
  if (type == ElemType::F16 && value->kind == ast::ExprKind::Cast &&
      value->cast_to == ElemType::F16)
    value = value->args[0].get();
  ir::Expr body = emit(*value, st, compute_type(type));
  for (const StmtInfo::DataBound& b : st.data_bounds) {  // lo <= k < hi, else the identity
    auto as_index = [&](const ast::Expr& e) {
      ir::Expr v = emit(e, st, ElemType::I64);
      return v->type == ElemType::I64 ? v : ir::make_cast(v, ElemType::I64);
    };
    ir::Expr k = ir::make_index(b.index);
    ir::Expr inside =
        ir::make_binary(ir::BinOp::And, ir::make_binary(ir::BinOp::Ge, k, as_index(*b.lo)),
                        ir::make_binary(ir::BinOp::Lt, k, as_index(*b.hi)));
    body = ir::make_select(inside, body, ir::make_identity(reduce_op(s.op), body->type));
  }
  return env_.fb->compute(name, std::move(out), std::move(reduce), reduce_op(s.op), body, init,
                          type, s.span, text(s.span));
}

std::pair<int64_t, int64_t> Lowerer::loop_range(const ast::Stmt& s) {
  std::optional<int64_t> lo = s.lo ? loop_bound(*s.lo) : std::nullopt;
  std::optional<int64_t> hi = s.hi ? loop_bound(*s.hi) : std::nullopt;
  int64_t trip = 1;
  if (lo && hi) {
    if (*hi <= *lo) {
      error(Span::join(s.lo->span, s.hi->span),
            "empty range for loop variable " + quote(s.var.name) + ": [" + std::to_string(*lo) +
                ", " + std::to_string(*hi) + ")");
    } else {
      trip = *hi - *lo;
    }
  }
  return {lo.value_or(0), trip};
}

void Lowerer::check_loop_var(const ast::Ident& var) {
  if (name_clashes(var, "a loop variable")) return;
  if (const Binding* b = scopes_.find(var.name)) {
    Diagnostic& d = error(var.span, "redefinition of " + quote(var.name) +
                                        ": a loop variable cannot have the name of a tensor");
    d.notes.push_back({b->decl, quote(var.name) + " is defined here"});
  }
}

void Lowerer::for_loop(const ast::Stmt& s, const LaterNames& later) {
  const auto [lo, trip] = loop_range(s);
  check_loop_var(s.var);
  // Tensors defined before the loop and assigned in its body are carried.
  std::vector<std::string> assigned;
  collect_assigned(s.body, assigned);
  std::string ir_var = s.var.name;
  for (int k = 1; ir_loop_vars_.count(ir_var); ++k) ir_var = s.var.name + "_" + std::to_string(k);
  Span header = Span::join(Span::of(s.span.begin, s.span.begin), s.hi ? s.hi->span : s.span);
  env_.fb->begin_loop(ir_var, trip, s.span, text(header));

  struct Carried {
    std::string name;
    Binding outer;
    ir::ValuePtr param;
  };
  std::vector<Carried> carried;
  std::vector<std::pair<std::string, Binding>> poisoned_carried;
  for (const std::string& name : assigned) {
    const Binding* b = scopes_.find(name);
    if (!b || b->is_input) continue;
    if (b->ok())
      carried.push_back({name, *b, nullptr});
    else
      poisoned_carried.push_back({name, *b});
  }
  scopes_.push();
  for (Carried& c : carried) {
    auto renamed = env_.rename.find(c.name);
    c.param =
        env_.fb->carry(c.outer.value, renamed == env_.rename.end() ? c.name : renamed->second);
    scopes_.bind(c.name, Binding{c.param, c.outer.rank, c.outer.decl, false}, false);
  }
  for (const auto& [name, b] : poisoned_carried) scopes_.bind(name, b, false);
  loops_.push_back(LoopVar{s.var.name, ir_var, lo, trip, s.var.span});
  ir_loop_vars_.insert(ir_var);

  block(s.body, later);

  std::vector<ir::ValuePtr> next;
  for (const Carried& c : carried) {
    const Binding* now = scopes_.find(c.name);
    if (now && now->ok()) {
      next.push_back(now->value);
    } else {
      failed_ = true;
      next.push_back(c.param);
    }
  }
  std::vector<std::pair<std::string, Binding>> live_out;  // definitions of the body used later
  std::vector<ir::ValuePtr> live_values;
  for (const std::string& name : scopes_.defined_order()) {
    const Binding* b = scopes_.find(name);
    bool is_carried = false;
    for (const Carried& c : carried) is_carried |= c.name == name;
    if (is_carried || !later.count(name) || !b) continue;
    live_out.push_back({name, *b});
    if (b->ok()) live_values.push_back(b->value);
  }
  loops_.pop_back();
  ir_loop_vars_.erase(ir_var);
  std::vector<ir::ValuePtr> results = env_.fb->end_loop(next, live_values);
  scopes_.pop();

  size_t r = 0;
  for (const Carried& c : carried) {
    Binding b = c.outer;
    b.value = results[r++];
    scopes_.bind(c.name, b, false);
  }
  for (auto& [name, b] : live_out) {
    Binding after = b;
    if (b.ok()) after.value = results[r++];
    scopes_.bind(name, after, true);
  }
}

ir::SizeExpr Lowerer::declared_dim(const ast::Dim& d) const {
  if (d.name.empty()) return ir::SizeExpr(d.value);
  auto it = env_.sizes.find(d.name);
  TENET_ASSERT(it != env_.sizes.end(), "declared size " << d.name << " is not bound");
  return it->second;
}

std::vector<ir::ValuePtr> Lowerer::outputs() {
  std::vector<ir::ValuePtr> values;
  for (const ast::Output& o : env_.fn->outputs) {
    const Binding* b = scopes_.find(o.name.name);
    if (!b) {
      error(o.name.span, "output " + quote(o.name.name) + " is never defined");
      values.push_back(nullptr);
      continue;
    }
    if (!b->ok()) {
      failed_ = true;
      values.push_back(nullptr);
      continue;
    }
    ir::ValuePtr v = b->value;
    if (o.declared) {
      std::string problem;
      if (size_t(v->rank()) != o.dims.size()) {
        problem = "rank mismatch: output " + quote(o.name.name) + " is declared with rank " +
                  std::to_string(o.dims.size()) + " but has rank " + std::to_string(v->rank());
      } else if (v->type != o.type) {
        problem = "type mismatch: output " + quote(o.name.name) + " is declared " +
                  std::string(type_name(o.type)) + " but is " + std::string(type_name(v->type));
      } else {
        for (size_t d = 0; d < o.dims.size() && problem.empty(); ++d) {
          ir::SizeExpr want = declared_dim(o.dims[d]);
          if (v->shape[d] != want)
            problem = "size mismatch: output " + quote(o.name.name) + " is declared with size " +
                      want.str() + " in dimension " + std::to_string(d) + " but has size " +
                      v->shape[d].str();
        }
      }
      if (!problem.empty()) {
        Diagnostic& d = error(o.name.span, problem);
        d.notes.push_back({b->decl, quote(o.name.name) + " is defined here"});
        v = nullptr;
      }
    }
    values.push_back(v);
  }
  return values;
}

}  // namespace tenet::lang::detail
