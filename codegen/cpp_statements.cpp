// Statements as loop nests: a Compute becomes out loops around (reduce loops
// around) one assignment, in the order its schedule gives (lower/schedule.h:
// out loops inside the reduce loops accumulate in place), and consecutive
// statements that share outer loops become one nest (a Loop: cpp_loop.cpp;
// a jammed reduction: cpp_jam.cpp). Reduce loops run only where their body's
// guard can hold (codegen/loop_bounds.h).
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
#include "lower/nests.h"
#include "passes/schedule.h"
#include "support/error.h"

namespace tenet::codegen::detail {

bool checks_indices_of(const ir::Stmt& s, const Scope& scope) {
  return scope.check_indices && !s.annotations.reshape;
}

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
  std::string text = lhs + ") " + assign_text(c.op) + " " + ir::print(c.body);
  if (c.init) text += "  (starting from " + c.init->name + ")";
  return text;
}

void FunctionEmitter::emit_block(Code& code, const std::vector<ir::Stmt>& body,
                                 const Scope& scope) {
  // Live statements in order, in nests of consecutive Computes that share
  // loops (lower/nests.h).
  std::vector<std::vector<Scheduled>> nests;
  for (const std::vector<lower::NestMember>& members : lower::nests_of(body, lowered_)) {
    nests.emplace_back();
    for (const lower::NestMember& member : members) {
      const ir::Stmt& s = *member.stmt;
      Scheduled m =
          lower::runs_as_loops(s, lowered_) ? scheduled(s, scope) : Scheduled{&s, {}, {}, {}, {}};
      m.schedule.shared = member.shared;
      nests.back().push_back(m);
    }
  }
  for (size_t i = 0; i < nests.size(); ++i) {
    if (i > 0) code.line("");
    const Scheduled& first = nests[i][0];
    const bool checked =
        first.stmt->kind == ir::StmtKind::Compute &&
        std::any_of(nests[i].begin(), nests[i].end(), [&](const Scheduled& m) {
          return has_checked_index(m.stmt->compute.body, checks_indices_of(*m.stmt, scope));
        });
    if (checked)
      for (const Scheduled& m : nests[i]) check_nonempty_dims(code, m.stmt->compute);
    if (nests[i].size() > 1)
      emit_nest(code, nests[i], scope);
    else if (first.stmt->kind == ir::StmtKind::Compute)
      emit_compute(code, *first.stmt, scope);
    else
      emit_loop(code, *first.stmt, scope);
    if (checked) code.line(std::string(kIndexFault) + ".raise_if_failed();");
  }
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

bool FunctionEmitter::checks_indices() const {
  bool any = false;
  ir::for_each_stmt(fn_.body, [&](const ir::Stmt& s) {
    any =
        any || (s.kind == ir::StmtKind::Compute &&
                has_checked_index(s.compute.body, options_.index_checks && !s.annotations.reshape));
  });
  return any;
}

FunctionEmitter::Scheduled FunctionEmitter::scheduled(const ir::Stmt& s, const Scope& scope) const {
  Scheduled m{&s, lower::loop_schedule(s), {}, {}, {}};
  const ir::Compute& c = s.compute;
  std::vector<std::string> order;
  std::map<std::string, IndexInfo> ranges = scope.indices;
  // A jammed loop runs inside the reduce loops: their bounds must not depend on it.
  const size_t jammed = m.schedule.jam > 0 ? 1 : 0;
  for (size_t q = 0; q + jammed < m.schedule.outer.size(); ++q)
    order.push_back(c.out[m.schedule.outer[q]].index);
  for (const ir::Dim& d : c.reduce) order.push_back(d.index);
  if (jammed) order.push_back(c.out.back().index);
  for (size_t p : m.schedule.inner) order.push_back(c.out[p].index);
  for (const auto* dims : {&c.out, &c.reduce})
    for (const ir::Dim& d : *dims) ranges[d.index] = IndexInfo{d.index, d.lo, d.hi};
  m.guard = infer_guard_bounds(c, order, ranges);
  m.peel = lower::border_peel(c, m.schedule);
  if (m.peel) {
    ir::Compute interior = c;
    interior.body = m.peel->interior;
    for (const passes::WindowBorder& l : m.peel->loops) {
      const std::string& index = c.out[l.dim].index;
      ranges[index] = IndexInfo{index, ir::SizeExpr(l.lo), ir::SizeExpr(l.hi)};
    }
    m.interior_guard = infer_guard_bounds(interior, order, ranges);
  }
  return m;
}

std::string FunctionEmitter::parallel_pragma(const std::vector<Scheduled>& nest,
                                             bool column_tiles) const {
  if (!options_.openmp || (nest[0].schedule.outer.empty() && !column_tiles)) return "";
  // Work is out elements times reduction length, summed over the statements
  // of the nest; each out element is computed by one thread, in the serial
  // order, so the result is deterministic.
  int64_t constant_work = 0;
  std::vector<std::pair<std::string, int64_t>> terms;  // symbolic product, constant factor
  for (const Scheduled& m : nest) {
    const ir::Compute& c = m.stmt->compute;
    const TensorAccess& result = access(c.result);
    int64_t constant = 1;
    std::string factors;
    auto factor = [&](const ir::SizeExpr& extent, const std::string& text) {
      if (auto k = extent.constant())
        constant *= *k;
      else
        factors += (factors.empty() ? "" : " * ") + text;
    };
    for (size_t d = 0; d < c.out.size(); ++d) factor(c.out[d].extent(), result.dims[d]);
    for (size_t r = 0; r < c.reduce.size(); ++r) {
      const ir::Dim& d = c.reduce[r];
      // A loop narrowed to a window by its guard runs at most the window's width.
      if (auto window = window_trip_count(m.guard.reduce[r])) {
        const auto extent = d.extent().constant();
        constant *= extent ? std::min(*extent, *window) : *window;
        continue;
      }
      // "(hi - lo)" reads better than the normal form of the difference.
      CExpr hi = size_to_c(d.hi, size_names_), lo = size_to_c(d.lo, size_names_);
      std::string extent = d.lo == ir::SizeExpr(0) ? wrap(hi, kPrecMultiplicative + 1)
                                                   : "(" + wrap(hi, kPrecAdditive) + " - " +
                                                         wrap(lo, kPrecAdditive + 1) + ")";
      factor(d.extent(), extent);
    }
    auto same = std::find_if(terms.begin(), terms.end(),
                             [&](const auto& term) { return term.first == factors; });
    if (factors.empty())
      constant_work += constant;
    else if (same != terms.end())
      same->second += constant;  // "B * I * J * 4", not four times "B * I * J"
    else
      terms.push_back({factors, constant});
  }
  const std::string threshold = std::to_string(options_.parallel_min_work);
  if (terms.empty())
    return constant_work >= options_.parallel_min_work ? "#pragma omp parallel for" : "";
  std::string sum;
  for (const auto& [factors, constant] : terms)
    sum += (sum.empty() ? "" : " + ") + factors +
           (constant == 1 ? "" : " * " + std::to_string(constant));
  if (constant_work != 0) sum += " + " + std::to_string(constant_work);
  return "#pragma omp parallel for if (" + sum + " >= " + threshold + ")";
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

void FunctionEmitter::emit_compute(Code& code, const ir::Stmt& s, const Scope& scope) {
  if (is_view(s))
    emit_view(code, s);
  else if (gemms_.count(&s))
    emit_gemm(code, s, scope);
  else if (s.annotations.conv)
    emit_conv(code, s, scope);
  else if (auto it = lowered_.scatters.find(&s); it != lowered_.scatters.end())
    emit_scatter(code, s, it->second, scope);
  else
    emit_loop_nest(code, s, scope);
}

void FunctionEmitter::emit_loop_nest(Code& code, const ir::Stmt& s, const Scope& scope) {
  Scheduled m = scheduled(s, scope);
  m.schedule.shared = 0;
  emit_nest(code, {m}, scope);
}

void FunctionEmitter::emit_nest(Code& code, const std::vector<Scheduled>& nest,
                                const Scope& scope) {
  const ir::Compute& head = nest[0].stmt->compute;
  // No loop outside the reduction (a scalar, or every out index inside it):
  // a block scopes the accumulator.
  const bool scalar_block = nest[0].schedule.outer.empty() && head.op != ir::ReduceOp::None;
  if (scalar_block) code.open("");
  std::vector<std::string> loop_vars;
  if (nest.size() == 1) {
    emit_scheduled(code, nest[0], loop_vars, scope, false);
  } else {
    std::string names;
    for (size_t i = 0; i < nest.size(); ++i)
      names += std::string(i == 0                 ? ""
                           : i + 1 == nest.size() ? " and "
                                                  : ", ") +
               nest[i].stmt->compute.result->name;
    code.note(names +
              " share one loop nest: each reads from the others only what the current "
              "iteration of the shared loops computed.");
    emit_shared(code, nest, 0, nest.size(), loop_vars, scope);
  }
  if (scalar_block) code.close();
}

void FunctionEmitter::emit_shared(Code& code, const std::vector<Scheduled>& nest, size_t first,
                                  size_t end, std::vector<std::string>& loop_vars,
                                  const Scope& scope) {
  // Members [first, end) share the loops in loop_vars; group the runs of them
  // that also share the next loop.
  const size_t depth = loop_vars.size();
  bool blank = false;
  for (size_t i = first; i < end;) {
    size_t j = i + 1;
    while (j < end && nest[j].schedule.shared > depth) ++j;
    if (blank) code.line("");
    blank = true;
    if (j == i + 1) {
      emit_scheduled(code, nest[i], loop_vars, scope, true);
      i = j;
      continue;
    }
    if (nest[i].schedule.jam > 0 && depth + 1 == nest[i].schedule.outer.size()) {
      emit_jam_run(code, nest, i, j, loop_vars, scope);  // the shared loop is the jammed one
      i = j;
      continue;
    }
    // The shared loop: named and bounded after the run's first statement,
    // with a name none of the run's statements uses otherwise.
    const ir::Compute& c = nest[i].stmt->compute;
    const size_t out_at = nest[i].schedule.outer[depth];
    for (size_t k = i + 1; k < j; ++k)
      TENET_ASSERT(nest[k].stmt->compute.out[out_at].extent() == c.out[out_at].extent(),
                   "statements " << c.result->name << " and " << nest[k].stmt->compute.result->name
                                 << " share a loop of different extents");
    Namer names;
    for (size_t k = i; k < j; ++k) reserve_names(names, nest[k].stmt->compute, scope);
    // nor an enclosing shared loop's (a statement's own `j` inside the shared loop
    // named after another's `j` read the inner one: wrong rows)
    for (const std::string& outer : loop_vars) names.reserve(outer);
    const std::string var = names.take(c.out[out_at].index);
    const Scope inside = hoist_above_shared_loop(code, nest, i, j, loop_vars, scope, names);
    if (depth == 0) {
      const std::vector<Scheduled> run(nest.begin() + long(i), nest.begin() + long(j));
      if (std::string pragma = parallel_pragma(run); !pragma.empty()) code.line(pragma);
    }
    const TensorAccess& result = access(c.result);
    code.open(for_header(var, "0", CExpr{result.dims[out_at], kPrecPrimary}));
    loop_vars.push_back(var);
    declare_rows(code, nest, i, j, loop_vars.size());
    emit_shared(code, nest, i, j, loop_vars, inside);
    loop_vars.pop_back();
    code.close();
    i = j;
  }
}

void FunctionEmitter::emit_scheduled(Code& code, const Scheduled& m,
                                     const std::vector<std::string>& loop_vars, const Scope& scope,
                                     bool in_nest, JamGroup* group) {
  const ir::Stmt& s = *m.stmt;
  const ir::Compute& c = s.compute;
  const lower::LoopSchedule& schedule = m.schedule;
  code.comment(comment_text(s));
  // The shared loops (outermost out indices) are already open.
  Scope inner = scope;
  inner.statement = c.result->name;
  inner.check_indices = checks_indices_of(s, scope);
  for (size_t p = 0; p < loop_vars.size(); ++p) {
    const ir::Dim& d = c.out[schedule.outer[p]];
    inner.bind(d.index, loop_vars[p], d.lo, d.hi);
  }
  Namer local = statement_namer(c, inner);
  if (group) {
    local.reserve(group->tile);
    local.reserve(group->lane);
    for (const std::string& name : group->reduce_vars) local.reserve(name);
  }
  std::vector<std::string> out_vars(c.out.size()), reduce_vars;
  for (size_t d = 0; d < c.out.size(); ++d) {
    out_vars[d] = d < loop_vars.size() ? loop_vars[d] : local.take(c.out[d].index);
    inner.bind(c.out[d].index, out_vars[d], c.out[d].lo, c.out[d].hi);
  }
  for (size_t d = 0; d < c.reduce.size(); ++d) {
    reduce_vars.push_back(group ? group->reduce_vars.at(d) : local.take(c.reduce[d].index));
    inner.bind(c.reduce[d].index, reduce_vars.back(), c.reduce[d].lo, c.reduce[d].hi);
  }
  const std::vector<ir::Affine> position = ir::plain_indices(c.out);
  const TensorAccess& result = access(c.result);
  const std::string target = result.pointer + "[" + flat_offset(result, position, inner) + "]";
  auto open_out = [&](const std::vector<size_t>& dims, size_t from) {
    for (size_t k = from; k < dims.size(); ++k)
      code.open(for_header(out_vars[dims[k]], "0", CExpr{result.dims[dims[k]], kPrecPrimary}));
  };
  auto close_n = [&](size_t n) {
    for (size_t k = 0; k < n; ++k) code.close();
  };
  // Narrowed loops, and among them those that always run once (a local
  // instead), under `guard` (the statement's, or its interior's: lower/peel.h).
  const GuardBounds* guard = nullptr;
  std::string narrowed, single;
  std::vector<std::optional<CExpr>> only(c.reduce.size());
  auto use_guard = [&](const GuardBounds& g) {
    guard = &g;
    narrowed.clear(), single.clear();
    for (size_t d = 0; d < c.reduce.size(); ++d) {
      only[d].reset();
      if (!g.reduce[d].narrowed()) continue;
      only[d] = single_iteration(c.reduce[d], g.reduce[d], inner);
      std::string& list = only[d] ? single : narrowed;
      list += (list.empty() ? "" : ", ") + reduce_vars[d];
    }
  };
  use_guard(m.guard);
  // The first and the end of reduce loop d, narrowed where the guard does.
  auto reduce_bounds = [&](size_t d) -> std::pair<std::string, CExpr> {
    const ir::Dim& dim = c.reduce[d];
    const ReduceRange& range = guard->reduce[d];
    if (range.narrowed()) return {loop_start(dim, range, inner).text, loop_end(dim, range, inner)};
    return {size_to_c(dim.lo, size_names_).text, size_to_c(dim.hi, size_names_)};
  };
  // Opens the first `count` reduce loops.
  auto open_reduce_loops = [&](size_t count) {
    if (!narrowed.empty())
      code.note("Loops of " + narrowed +
                " only where the guard holds: the other terms add nothing.");
    if (!single.empty())
      code.note("The guard holds for one value of " + single + " only: a local instead of a loop.");
    for (size_t d = 0; d < count; ++d) {
      if (only[d]) {
        code.open("");  // a block, so that the closing brace matches a loop's
        code.line("const int64_t " + reduce_vars[d] + " = " + only[d]->text + ";");
      } else {
        auto [first, end] = reduce_bounds(d);
        code.open(for_header(reduce_vars[d], first, end));
      }
    }
  };
  auto open_reduce = [&] { open_reduce_loops(c.reduce.size()); };

  if (!in_nest && !schedule.outer.empty())
    if (std::string pragma = parallel_pragma({m}); !pragma.empty()) code.line(pragma);
  const size_t own_outer = schedule.outer.size() - loop_vars.size();
  const ElemType type = c.result->type, computed = compute_type(type);  // float16: float
  if (c.op == ir::ReduceOp::None) {
    if (own_outer > 0) {  // the innermost loop is this statement's own: loads above it
      std::vector<size_t> outside(schedule.outer.begin(), schedule.outer.end() - 1);
      open_out(outside, loop_vars.size());
      inner.statement_local_names = in_nest && own_outer == 1;
      hoist_invariant_reads(code, c.body, {c.out[schedule.outer.back()]}, local, inner);
      open_out(schedule.outer, schedule.outer.size() - 1);
    }
    code.line(target + " = " + stored(type, emit_expr(c.body, inner).text) + ";");
    close_n(own_outer);
    return;
  }
  // Peeled when every peeled loop is its own (a nest opens the shared ones),
  // and a loop stays outside the split one (the parallel loop: a pragma over
  // the split loop would cover its first part only).
  bool peeled = m.peel && own_outer > 0 && schedule.outer.size() > 1;
  for (size_t q = 0; peeled && q < loop_vars.size(); ++q)
    for (const passes::WindowBorder& l : m.peel->loops)
      peeled = peeled && l.dim != schedule.outer[q];
  // A jammed statement opens its last outer loop below, by tiles; a peeled
  // one by its border and interior.
  const std::vector<size_t> opened(schedule.outer.begin(),
                                   schedule.outer.end() - (schedule.jam > 0 || peeled ? 1 : 0));
  open_out(opened, loop_vars.size());
  std::string start = reduce_identity(c.op, computed);
  if (c.init) {
    const TensorAccess& init = access(c.init);
    CExpr element{init.pointer + "[" + flat_offset(init, position, inner) + "]", kPrecPrimary};
    start = (type == ElemType::F16 ? half_to_float(element) : element).text;
  }
  // Unlike indices, the accumulator never shadows a function-level name:
  // "acc" reading as a tensor elsewhere would mislead. In a nest, where
  // statements are siblings, it is named after the result.
  // A jam group's members are siblings too.
  const bool sibling = in_nest && (own_outer == 0 || group);
  std::string acc = sibling ? result.pointer + "_acc" : "acc";
  for (int n = 1; names_.taken(acc) || local.taken(acc); ++n)
    acc = (sibling ? result.pointer + "_acc_" : "acc_") + std::to_string(n);
  local.reserve(acc);
  // A float32 sum accumulates in double, rounded once (ir/scatter_form.h).
  const bool wide = ir::accumulates_in_double(c);
  if (!schedule.inner.empty() && wide) {
    // Out indices inside the reduction, accumulated in a block of doubles on
    // the stack, then rounded into the result. Only the first inner index may
    // have a symbolic extent (passes/schedule.cpp); the block then holds a
    // tile of its values at a time.
    const size_t first = schedule.inner[0];
    int64_t rest = 1;  // the other inner extents
    std::string flat;  // the element's offset in the block
    for (size_t k = schedule.inner.size(); k-- > 1;) {
      const size_t d = schedule.inner[k];
      const std::optional<int64_t> extent = c.out[d].extent().constant();
      TENET_ASSERT(extent,
                   "block of double accumulators over a symbolic extent in " << c.result->name);
      const std::string term = out_vars[d] + (rest == 1 ? "" : " * " + std::to_string(rest));
      flat = flat.empty() ? term : term + " + " + flat;
      rest *= *extent;
    }
    const std::optional<int64_t> first_extent = c.out[first].extent().constant();
    // With no loop outside (a column sum: schedule.h), wide blocks are cut
    // into at most 8 tiles of columns that threads share: each element is
    // still summed in order by one thread.
    constexpr int64_t kMinColumns = 64;
    const bool columns = first_extent && schedule.outer.empty() && !in_nest &&
                         *first_extent >= 2 * kMinColumns && options_.openmp;
    const int64_t tile = columns        ? std::max(kMinColumns, (*first_extent + 127) / 128 * 16)
                         : first_extent ? *first_extent
                                        : std::max<int64_t>(1, passes::kMaxInnerBlock / rest);
    const bool tiled = !first_extent || columns;
    const std::string tile_start = tiled ? local.take(c.out[first].index + "_tile") : "";
    const std::string tile_end = tiled ? local.take(c.out[first].index + "_tile_end") : "";
    const std::string at_first =
        tile_start.empty() ? out_vars[first] : "(" + out_vars[first] + " - " + tile_start + ")";
    const std::string term = at_first + (rest == 1 ? "" : " * " + std::to_string(rest));
    const std::string element = acc + "[" + (flat.empty() ? term : term + " + " + flat) + "]";
    auto open_block = [&] {
      if (tile_start.empty())
        code.open(for_header(out_vars[first], "0", CExpr{result.dims[first], kPrecPrimary}));
      else
        code.open(for_header(out_vars[first], tile_start, CExpr{tile_end, kPrecPrimary}));
      open_out(schedule.inner, 1);
    };
    if (!tile_start.empty()) {
      if (columns)
        if (std::string pragma = parallel_pragma({m}, true); !pragma.empty()) code.line(pragma);
      code.open("for (int64_t " + tile_start + " = 0; " + tile_start + " < " + result.dims[first] +
                "; " + tile_start + " += " + std::to_string(tile) + ")");
      code.line("const int64_t " + tile_end + " = std::min<int64_t>(" + tile_start + " + " +
                std::to_string(tile) + ", " + result.dims[first] + ");");
    }
    code.line("double " + acc + "[" + std::to_string(tile * rest) + "];");
    open_block();
    code.line(element + " = " + start + ";");
    close_n(schedule.inner.size());
    open_reduce();
    hoist_computed_indices(code, m.guard.body, c, schedule.inner, local, inner);
    open_block();
    code.line(reduce_step(c.op, c.result->type, element, emit_expr(m.guard.body, inner)));
    close_n(schedule.inner.size() + c.reduce.size());
    open_block();
    code.line(target + " = float(" + element + ");");
    close_n(schedule.inner.size() + (tile_start.empty() ? 0 : 1));
    close_n(own_outer);
    return;
  }
  if (!schedule.inner.empty()) {
    // Out indices inside the reduction: start the block, then accumulate in
    // place; every element still sums in the reduce indices' order. (Never
    // for float16, which would round at every step: passes/schedule.cpp.)
    TENET_ASSERT(type != ElemType::F16, "in-place accumulation into float16 " << c.result->name);
    open_out(schedule.inner, 0);
    code.line(target + " = " + start + ";");
    close_n(schedule.inner.size());
    open_reduce();
    hoist_computed_indices(code, m.guard.body, c, schedule.inner, local, inner);
    open_out(schedule.inner, 0);
    code.line(reduce_step(c.op, c.result->type, target, emit_expr(m.guard.body, inner)));
    close_n(schedule.inner.size() + c.reduce.size());
    close_n(own_outer);
    return;
  }
  const std::string acc_type = wide ? std::string("double") : c_type(computed);
  if (schedule.jam > 0) {
    JamMember member{&m, JammedText{target, start, acc, acc_type, computed, wide}, inner,
                     out_vars[schedule.outer.back()]};
    if (group) {
      group->members.push_back(std::move(member));
      return;
    }
    TENET_ASSERT(own_outer > 0, "statement " << c.result->name
                                             << " shares its jammed loop with a statement that "
                                                "does not jam the same loop");
    const std::string& index = c.out[schedule.outer.back()].index;
    JamGroup alone{local.take(index + "_tile"), local.take(index + "_lane"), {}, {}};
    alone.members.push_back(std::move(member));
    emit_jam_group(code, alone, local, open_reduce);
    close_n(own_outer - 1);
    return;
  }
  // One element: its accumulator, its terms under `g`, the store.
  auto element = [&](const GuardBounds& g) {
    const Scope outside = inner;  // what the element's block hoists stays in it
    use_guard(g);
    code.line(acc_type + " " + acc + " = " + start + ";");
    inner.statement_local_names = in_nest && own_outer == 0;
    hoist_invariant_reads(code, g.body, c.reduce, local, inner);
    if (schedule.lanes > 0 && !only[c.reduce.size() - 1]) {
      emit_lanes(code, m, acc, reduce_vars, local, inner, reduce_bounds(c.reduce.size() - 1),
                 open_reduce_loops);
    } else {
      open_reduce();
      code.line(reduce_step(c.op, computed, acc, emit_expr(g.body, inner)));
      close_n(c.reduce.size());
    }
    code.line(target + " = " + stored(type, wide ? "float(" + acc + ")" : acc) + ";");
    inner = outside;
  };
  if (!peeled) {
    element(m.guard);
    close_n(own_outer);
    return;
  }
  emit_peeled(code, m, out_vars, [&](const GuardBounds& g) { element(g); });
  close_n(own_outer - 1);
}

}  // namespace tenet::codegen::detail
