// The scope replay: runs the checker's rules for names and ranges over the
// Lines, before any text exists, to make sure the printed program checks into
// the IR it came from.
//
// Names (check.cpp rule 2): every read must see, under its source name, the
// very value the IR reads; `+=` must update the IR's init; a block defines a
// name once; a loop carries exactly the names its body assigns that are bound
// outside it, and those must be the IR's carried tensors. A failure names the
// value whose group must give up its merges.
//
// Ranges (rule 6): the checker's own inference (ranges.h) runs on each
// statement with the source shapes of the tensors read (which may differ in
// form from the IR's when an input dimension got a fresh size name); every
// index whose inferred range differs from the IR's gets a where clause, and an
// unguarded read that the checker would prove out of bounds (the IR keeps it
// under a select) is printed guarded.
#include <algorithm>
#include <tuple>

#include "ir/mutator.h"
#include "lang/ranges.h"
#include "lang/unparse_internal.h"
#include "support/error.h"

namespace tenet::lang::unparse_detail {

namespace {

using ir::SizeExpr;

const SourceFile& no_file() {
  static const SourceFile file("<unparse>", "");
  return file;
}

void collect_assigned(const std::vector<Line>& lines, const Names& names,
                      std::vector<std::string>& out) {
  for (const Line& l : lines) {
    if (l.kind == Line::Kind::Loop) {
      collect_assigned(l.body_lines, names, out);
      continue;
    }
    const std::string& n = names.of(l.target);
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
}

class Replay {
 public:
  Replay(const ir::Function& fn, Lowered& lowered, const Names& names, Decisions& decisions)
      : fn_(fn), lowered_(lowered), names_(names), decisions_(decisions) {
    for (const auto& [name, size] : names.fresh) subst_[name] = size;
  }

  std::optional<Violation> run() {
    blocks_.emplace_back();
    for (const auto& in : fn_.inputs) {
      const std::string& n = names_.of(in);
      blocks_.back().bound[n] = in.get();
      blocks_.back().defined.insert(n);
      inputs_.insert(n);
      shape_[in.get()] = names_.input_shape.at(in.get());
      for (const auto& d : shape_[in.get()]) {
        auto s = d.symbols();
        available_.insert(s.begin(), s.end());
      }
    }
    if (!lines(lowered_.lines)) return violation_;
    for (const OutputSlot& o : lowered_.outputs)
      if (lookup(names_.of(o.value)) != o.value.get())
        return Violation{o.value.get(), "output '" + o.name + "' is not what its name holds"};
    return missing_sizes();
  }

 private:
  struct Block {
    std::map<std::string, ValueKey> bound;
    std::set<std::string> defined;
  };

  ValueKey lookup(const std::string& name) const {
    for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) {
      auto b = it->bound.find(name);
      if (b != it->bound.end()) return b->second;
    }
    return nullptr;
  }

  bool fail(ValueKey v, std::string why) {
    violation_ = Violation{v, std::move(why)};
    return false;
  }

  bool lines(std::vector<Line>& ls) {
    for (Line& l : ls)
      if (!(l.kind == Line::Kind::Assign ? assign(l) : loop(l))) return false;
    return true;
  }

  bool assign(Line& line) {
    for (const ir::Expr& r : ir::reads_of(line.body))
      if (lookup(names_.of(r->tensor)) != r->tensor.get())
        return fail(r->tensor.get(), "a read of '" + names_.of(r->tensor) + "' sees another value");
    const std::string& name = names_.of(line.target);
    if (inputs_.count(name)) return fail(line.target.get(), "assigns the input '" + name + "'");
    ValueKey existing = lookup(name);
    bool update = line.op == "+=";
    if (update && existing != line.init.get())
      return fail(line.target.get(), "'" + name + "' += updates another version");
    if (!update && blocks_.back().defined.count(name))
      return fail(line.target.get(), "redefinition of '" + name + "'");
    if (existing &&
        (existing->rank() != line.target->rank() || existing->type != line.target->type))
      return fail(line.target.get(), "'" + name + "' changes its type or rank");
    const std::vector<SizeExpr>* target_dims = existing ? &shape_.at(existing) : nullptr;
    line.statement_type = existing ? compute_type(existing->type) : ElemType::F32;
    line.declares_half = !existing && line.target->type == ElemType::F16;
    std::vector<SizeExpr> shape;
    std::set<std::string> used;
    if (line.reshape) {  // the sizes are written out: no ranges to infer
      shape = line.target->shape;
      for (const SizeExpr& d : shape) used.merge(d.symbols());
    } else if (!ranges(line, target_dims, shape)) {
      return false;
    }
    collect_symbols(line.body, used);
    needed_.insert(used.begin(), used.end());
    shape_[line.target.get()] = std::move(shape);
    blocks_.back().bound[name] = line.target.get();
    if (!update) blocks_.back().defined.insert(name);
    return true;
  }

  bool loop(Line& line) {
    std::vector<std::string> assigned;
    collect_assigned(line.body_lines, names_, assigned);
    std::set<std::string> carried_by_source;
    for (const std::string& n : assigned)
      if (lookup(n) && !inputs_.count(n)) carried_by_source.insert(n);
    std::set<std::string> intended;
    for (const Carry& c : line.carries) {
      if (!c.init) continue;
      const std::string& n = names_.of(c.param);
      if (lookup(n) != c.init.get())
        return fail(c.init.get(), "'" + n + "' does not hold the carried tensor's initial value");
      if (!carried_by_source.count(n) && c.next != c.param)
        return fail(c.param.get(), "the body does not assign the carried '" + n + "'");
      intended.insert(n);
    }
    for (const std::string& n : carried_by_source)
      if (!intended.count(n)) return fail(lookup(n), "the loop would carry '" + n + "'");

    blocks_.emplace_back();
    trips_[line.var] = line.trip;
    for (const Carry& c : line.carries) {
      if (!c.init) continue;
      blocks_.back().bound[names_.of(c.param)] = c.param.get();
      shape_[c.param.get()] = shape_.at(c.init.get());
    }
    if (!lines(line.body_lines)) return false;
    for (const Carry& c : line.carries) {
      const std::string& n = names_.of(c.result);
      if (lookup(n) != c.next.get())
        return fail(c.next.get(), "'" + n + "' does not hold the loop's next value at its end");
      if (!c.init && (names_.of(c.next) != n || !blocks_.back().defined.count(n)))
        return fail(c.next.get(), "'" + n + "' is not defined by the loop body");
    }
    blocks_.pop_back();
    trips_.erase(line.var);
    for (const Carry& c : line.carries) {
      const std::string& n = names_.of(c.result);
      if (!c.init && blocks_.back().defined.count(n))
        return fail(c.result.get(), "redefinition of '" + n + "' after the loop");
      blocks_.back().bound[n] = c.result.get();
      if (!c.init) blocks_.back().defined.insert(n);
      shape_[c.result.get()] = shape_.at(c.init ? c.init.get() : c.next.get());
    }
    return true;
  }

  // ---- ranges --------------------------------------------------------------

  std::vector<detail::RangeRead> range_reads(const Line& line) const {
    std::vector<detail::RangeRead> out;
    for (const ir::Expr& r : ir::reads_of(line.body)) {
      detail::RangeRead rr;
      rr.tensor = names_.of(r->tensor);
      rr.shape = shape_.at(r->tensor.get());
      rr.guarded = r->guarded || decisions_.guard.count(r.get());
      rr.dims = r->indices;
      rr.spans.resize(r->indices.size());
      for (size_t d = 0; d < r->indices.size(); ++d) rr.computed.push_back(r->is_computed(d));
      out.push_back(std::move(rr));
    }
    return out;
  }

  /// Guards the unguarded reads that `ix` proves out of bounds; true if any.
  bool guard_out_of_bounds(const Line& line, const std::vector<detail::RangeIndex>& ix) {
    std::map<std::string, std::pair<SizeExpr, SizeExpr>> range;
    for (const auto& [var, trip] : trips_) range[var] = {SizeExpr(0), SizeExpr(trip)};
    for (const auto& i : ix) range[i.ir_name] = {i.lo, i.hi};
    bool added = false;
    for (const ir::Expr& r : ir::reads_of(line.body)) {
      if (r->guarded || decisions_.guard.count(r.get())) continue;
      const std::vector<SizeExpr>& shape = shape_.at(r->tensor.get());
      for (size_t d = 0; d < r->indices.size(); ++d) {
        if (r->is_computed(d)) continue;
        SizeExpr mn = r->indices[d].offset, mx = r->indices[d].offset;
        bool known = true;
        for (const auto& [name, c] : r->indices[d].terms) {
          auto it = range.find(name);
          if (it == range.end()) {
            known = false;
            break;
          }
          SizeExpr lo = it->second.first, last = it->second.second - SizeExpr(1);
          mn = mn + SizeExpr(c) * (c > 0 ? lo : last);
          mx = mx + SizeExpr(c) * (c > 0 ? last : lo);
        }
        if (known && (ir::provably_le(shape[d], mx) || ir::provably_le(mn, SizeExpr(-1)))) {
          decisions_.guard.insert(r.get());
          added = true;
          break;
        }
      }
    }
    return added;
  }

  bool same_size(const SizeExpr& source, const SizeExpr& ir_size) const {
    return source.substitute(subst_) == ir_size;
  }

  /// Gives where clauses to some of the `wrong` indices: every one that no
  /// unguarded read uses (nothing else can fix it), else the one most likely
  /// written with a where clause by hand (a reduce index before an out
  /// index, a small constant range before a symbolic one, the later one),
  /// since a where clause on it may let the checker infer the others.
  static void add_where(Line& line, const std::vector<ir::Dim>& dims,
                        const std::vector<detail::RangeRead>& reads,
                        const std::vector<size_t>& wrong) {
    bool unread_found = false;
    for (size_t k : wrong) {
      bool read = false;
      for (const auto& r : reads)
        for (const auto& a : r.dims) read |= !r.guarded && a.coef(dims[k].index) != 0;
      if (!read) line.where[k] = unread_found = true;
    }
    if (unread_found) return;
    auto rank = [&](size_t k) {
      auto extent = dims[k].extent().constant();
      return std::tuple(k < line.out.size(), !extent, extent.value_or(0), -int64_t(k));
    };
    size_t best = wrong[0];
    for (size_t k : wrong)
      if (rank(k) < rank(best)) best = k;
    line.where[best] = true;
  }

  /// Decides the where clauses of an assignment and its result's source shape.
  bool ranges(Line& line, const std::vector<SizeExpr>* target_dims, std::vector<SizeExpr>& shape) {
    std::vector<ir::Dim> dims = line.out;
    dims.insert(dims.end(), line.reduce.begin(), line.reduce.end());
    size_t n_out = line.out.size();
    auto is_target = [&](size_t k) { return target_dims && k < n_out; };
    line.where.assign(dims.size(), false);
    for (size_t k = 0; k < dims.size(); ++k)
      line.where[k] =
          !is_target(k) && decisions_.force_where.count({line.target.get(), dims[k].index});
    // Plain uses of one index with different sizes: the checker would refuse.
    {
      std::map<std::string, std::vector<SizeExpr>> sizes;
      for (const auto& r : range_reads(line))
        for (size_t d = 0; !r.guarded && d < r.dims.size(); ++d)
          if (r.dims[d].is_plain_var()) sizes[r.dims[d].terms[0].first].push_back(r.shape[d]);
      for (size_t k = 0; k < dims.size(); ++k) {
        std::vector<SizeExpr>& s = sizes[dims[k].index];
        if (is_target(k)) s.push_back((*target_dims)[k]);
        for (const SizeExpr& x : s)
          if (x != s[0] && !is_target(k)) line.where[k] = true;
      }
    }
    for (size_t attempt = 0; attempt < dims.size() + 8; ++attempt) {
      std::vector<detail::RangeIndex> ix(dims.size());
      for (size_t k = 0; k < dims.size(); ++k) {
        ix[k].name = ix[k].ir_name = dims[k].index;
        ix[k].on_lhs = k < n_out;
        if (line.where[k]) ix[k].where = std::pair{dims[k].lo, dims[k].hi};
        if (is_target(k)) {
          ix[k].target_dim = (*target_dims)[k];
          ix[k].target_what = "dimension " + std::to_string(k);
        }
      }
      Diagnostics diags(no_file());
      std::vector<detail::RangeRead> reads = range_reads(line);
      bool ok = detail::infer_ranges(ix, reads, trips_, diags);
      std::vector<size_t> wrong;  // indices the checker would get wrong
      for (size_t k = 0; k < dims.size(); ++k) {
        if (line.where[k]) continue;
        if (ix[k].known && same_size(ix[k].lo, dims[k].lo) && same_size(ix[k].hi, dims[k].hi))
          continue;
        if (is_target(k))
          return fail(line.target.get(), "'" + names_.of(line.target) + "' changes its shape");
        wrong.push_back(k);
      }
      bool changed = !wrong.empty();
      if (changed) add_where(line, dims, reads, wrong);
      if (ok && !changed) {
        for (size_t k = 0; k < dims.size(); ++k)
          if (line.where[k]) {
            for (const SizeExpr* s : {&dims[k].lo, &dims[k].hi}) {
              auto syms = s->symbols();
              available_.insert(syms.begin(), syms.end());
            }
          } else {
            ranges_of_[{line.target.get(), dims[k].index}] = dims[k];
          }
        shape.clear();
        for (size_t k = 0; k < n_out; ++k)
          shape.push_back(is_target(k) ? (*target_dims)[k] : line.where[k] ? dims[k].hi : ix[k].hi);
        return true;
      }
      if (changed) continue;
      if (guard_out_of_bounds(line, ix)) continue;
      bool all = true;
      for (size_t k = 0; k < dims.size(); ++k) {
        all &= line.where[k] || is_target(k);
        if (!is_target(k)) line.where[k] = true;
      }
      if (all) {
        std::string why;
        for (const auto& d : diags.all()) why += "; " + d.message;
        throw InternalError("unparse: the checker would reject a statement of '" + fn_.name + "'" +
                            why);
      }
    }
    throw InternalError("unparse: range inference did not settle in '" + fn_.name + "'");
  }

  /// Size names the printed program uses but never declares get declared by
  /// a where clause on an index whose range mentions them.
  std::optional<Violation> missing_sizes() {
    bool added = false;
    for (const std::string& s : needed_) {
      if (available_.count(s)) continue;
      bool found = false;
      for (const auto& [key, dim] : ranges_of_) {
        if (key.first->id < 0) continue;  // a copy: remade each round
        auto syms = dim.lo.symbols();
        auto hi = dim.hi.symbols();
        syms.insert(hi.begin(), hi.end());
        if (!syms.count(s)) continue;
        decisions_.force_where.insert(key);
        found = added = true;
        break;
      }
      if (!found)
        throw CompileError("error: cannot print '" + fn_.name + "' as source: its size '" + s +
                           "' is used but no input or range declares it");
    }
    if (added) return Violation{nullptr, "declare sizes with where clauses"};
    return std::nullopt;
  }

  const ir::Function& fn_;
  Lowered& lowered_;
  const Names& names_;
  Decisions& decisions_;
  std::vector<Block> blocks_;
  std::set<std::string> inputs_;
  std::map<ValueKey, std::vector<SizeExpr>> shape_;  // shapes as the checker will see them
  std::map<std::string, int64_t> trips_;
  std::map<std::string, SizeExpr> subst_;  // fresh size name -> IR size
  std::set<std::string> available_;        // sizes the printed program declares
  std::set<std::string> needed_;           // sizes it uses as values or index offsets
  std::map<std::pair<ValueKey, std::string>, ir::Dim> ranges_of_;  // inferred ranges
  std::optional<Violation> violation_;
};

}  // namespace

std::optional<Violation> replay(const ir::Function& fn, Lowered& lowered, const Names& names,
                                Decisions& decisions) {
  return Replay(fn, lowered, names, decisions).run();
}

}  // namespace tenet::lang::unparse_detail
