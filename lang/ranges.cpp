// Range inference and bounds checks for one statement (see ranges.h).
//
// Order, as in check.cpp's rule 6: where clauses; dimensions of an existing or
// declared target; plain uses x(.., i, ..) (the smallest size, TC's rule; a
// target dimension must equal them all; reads in a select's branches only for
// indices no other read gives); then affine reads (those outside select
// branches first), solved iteratively for the one unknown index of an index
// expression once the others are known (several candidates: their min; the
// range starts above 0 where a read would be below 0 for every size).
// Unsolved indices are errors. Then: left indices start at 0, no range is
// provably empty, and no unguarded read leaves its tensor for every size
// (proved with size_proof.h; the note of a smaller range is reported here too).
#include "lang/ranges.h"

#include <algorithm>
#include <optional>
#include <set>

#include "lang/size_proof.h"

namespace tenet::lang::detail {

namespace {

using ir::SizeExpr;

std::string q(const std::string& s) {
  return "'" + s + "'";
}

std::string range_text(const SizeExpr& lo, const SizeExpr& hi) {
  return "[" + lo.str() + ", " + hi.str() + ")";
}

// ceil(a / d) for d > 0.
SizeExpr ceil_div(const SizeExpr& a, int64_t d) {
  return SizeExpr::floordiv(a + SizeExpr(d - 1), d);
}

// The rewrite of a left index whose where clause starts at lo != 0: TC
// would store the output from lo on (O@[lo; extent]) and hand its caller the
// elements counted from 0, which are "where i in 0:hi - lo" with "i + lo" for
// i on the right; TC's reads of the output at e are reads at "e - lo".
Note counted_from_zero(const RangeIndex& ix) {
  std::string shifted = ix.name, read = "e";
  if (std::optional<int64_t> c = ix.lo.constant(); c && *c < 0) {
    shifted += " - " + std::to_string(-*c);
    read += " + " + std::to_string(-*c);
  } else {
    const bool sum = ix.lo.atoms().size() + (ix.lo.constant_term() != 0) > 1;
    const std::string lo = sum ? "(" + ix.lo.str() + ")" : ix.lo.str();
    shifted += " + " + lo;
    read += " - " + lo;
  }
  return {ix.span, "a tensor's indices start at 0 (TC would offset the output): write 'where " +
                       ix.name + " in 0:" + (ix.hi - ix.lo).str() + "' and '" + shifted +
                       "' in place of " + q(ix.name) + " on the right, and read the output at '" +
                       read + "' where TC reads it at 'e'"};
}

class Inference {
 public:
  Inference(std::vector<RangeIndex>& indices, const std::vector<RangeRead>& reads,
            const std::map<std::string, int64_t>& loop_trips, Diagnostics& diags)
      : indices_(indices), reads_(reads), loops_(loop_trips), diags_(diags) {
    for (size_t i = 0; i < indices_.size(); ++i) by_ir_[indices_[i].ir_name] = int(i);
  }

  bool run() {
    given_ranges();
    plain_uses(false);
    plain_uses(true);
    solve_affine(false);
    solve_affine(true);
    unsolved();
    if (!ok_) return false;
    check_ranges();
    if (!ok_) return false;
    check_reads();
    return ok_;
  }

 private:
  RangeIndex* index(const std::string& ir_name) {
    auto it = by_ir_.find(ir_name);
    return it == by_ir_.end() ? nullptr : &indices_[it->second];
  }

  // The range of an index or loop variable, if known.
  bool range_of(const std::string& ir_name, SizeExpr& lo, SizeExpr& hi) {
    if (RangeIndex* ix = index(ir_name)) {
      if (!ix->known) return false;
      lo = ix->lo;
      hi = ix->hi;
      return true;
    }
    auto it = loops_.find(ir_name);
    if (it == loops_.end()) return false;
    lo = SizeExpr(0);
    hi = SizeExpr(it->second);
    return true;
  }

  // Min and max of a + terms over known ranges (every term must be known).
  bool bounds(const ir::Affine& a, const std::string& skip, SizeExpr& mn, SizeExpr& mx) {
    mn = a.offset;
    mx = a.offset;
    for (const auto& [name, c] : a.terms) {
      if (name == skip) continue;
      SizeExpr lo, hi;
      if (!range_of(name, lo, hi)) return false;
      SizeExpr last = hi - SizeExpr(1);
      if (c > 0) {
        mn = mn + SizeExpr(c) * lo;
        mx = mx + SizeExpr(c) * last;
      } else {
        mn = mn + SizeExpr(c) * last;
        mx = mx + SizeExpr(c) * lo;
      }
    }
    return true;
  }

  std::string dim_what(const RangeRead& r, size_t d) const {
    return "dimension " + std::to_string(d) + " of " + q(r.tensor);
  }

  void given_ranges() {
    for (RangeIndex& ix : indices_) {
      if (ix.where) {
        ix.known = true;
        ix.lo = ix.where->first;
        ix.hi = ix.where->second;
        ix.origin = ix.where_span;
        ix.origin_what = "the where clause";
        if (ix.target_dim && ix.hi != *ix.target_dim) {
          Diagnostic& d = diags_.error(
              ix.where_span, "size mismatch: the where clause gives " + q(ix.name) + " the range " +
                                 range_text(ix.lo, ix.hi) + " but it indexes " + ix.target_what +
                                 ", of size " + ix.target_dim->str());
          d.notes.push_back({ix.target_span, ix.target_what + " is indexed here"});
          ok_ = false;
        }
      } else if (ix.target_dim) {
        ix.known = true;
        ix.lo = SizeExpr(0);
        ix.hi = *ix.target_dim;
        ix.origin = ix.target_span;
        ix.origin_what = ix.target_what;
      }
    }
  }

  // Plain uses x(.., i, ..) give [0, size), the smallest when sizes differ;
  // an index fixed by a target dimension must agree with every plain use.
  // Conditional reads (in a branch of a select) come second and only give
  // ranges no other read gives.
  void plain_uses(bool conditional) {
    std::set<std::string> reported;
    // Indices that took the smaller range: each plain use (span, what, size).
    struct Use {
      Span span;
      std::string what;
      SizeExpr size;
    };
    std::map<std::string, std::vector<Use>> uses;
    std::vector<std::string> smaller;
    for (const RangeRead& r : reads_) {
      if (r.guarded || r.conditional != conditional) continue;
      for (size_t d = 0; d < r.dims.size() && d < r.shape.size(); ++d) {
        if (!r.dims[d].is_plain_var()) continue;
        RangeIndex* ix = index(r.dims[d].terms[0].first);
        if (!ix || ix->where) continue;
        const SizeExpr& size = r.shape[d];
        if (!conditional) uses[ix->ir_name].push_back({r.spans[d], dim_what(r, d), size});
        if (!ix->known) {
          ix->known = true;
          ix->lo = SizeExpr(0);
          ix->hi = size;
          ix->origin = r.spans[d];
          ix->origin_what = dim_what(r, d);
          continue;
        }
        if (conditional) continue;
        if (ix->hi == size) continue;
        if (!ix->target_dim) {
          // TC's rule: uses of different sizes give the smaller range.
          ix->hi = SizeExpr::min(ix->hi, size);
          if (std::find(smaller.begin(), smaller.end(), ix->ir_name) == smaller.end())
            smaller.push_back(ix->ir_name);
          continue;
        }
        if (reported.count(ix->ir_name)) continue;
        reported.insert(ix->ir_name);
        ok_ = false;
        Diagnostic& e =
            diags_.error(r.spans[d], "size mismatch for index " + q(ix->name) + ": " +
                                         ix->origin_what + " has size " + ix->hi.str() + " but " +
                                         dim_what(r, d) + " has size " + size.str());
        e.notes.push_back({ix->origin, q(ix->name) + " indexes " + ix->origin_what + " here"});
        e.notes.push_back({r.spans[d], "and " + dim_what(r, d) + " here"});
      }
    }
    // Not an error, but worth knowing: a size mismatch between the reads
    // makes the result smaller than some of them.
    for (const std::string& ir_name : smaller) {
      const RangeIndex* ix = index(ir_name);
      Diagnostic& n = diags_.note(ix->span, "index " + q(ix->name) + " ranges over " +
                                                range_text(ix->lo, ix->hi) +
                                                ", the smallest size of its uses (as in TC)");
      for (const Use& u : uses[ir_name])
        n.notes.push_back({u.span, u.what + " has size " + u.size.str()});
    }
  }

  // Facts for proofs: every range known so far is non-empty (the statement
  // runs only then).
  SizeFacts known_ranges_nonempty() const {
    SizeFacts facts;
    for (const RangeIndex& ix : indices_)
      if (ix.known) facts.assume_nonnegative(ix.hi - ix.lo - SizeExpr(1));
    return facts;
  }

  // The one unknown index of an affine index expression, if exactly one.
  const std::pair<std::string, int64_t>* single_unknown(const ir::Affine& a) {
    const std::pair<std::string, int64_t>* found = nullptr;
    for (const auto& term : a.terms) {
      SizeExpr lo, hi;
      if (range_of(term.first, lo, hi)) continue;
      if (found) return nullptr;
      found = &term;
    }
    return found;
  }

  void solve_affine(bool conditional) {
    bool progress = true;
    while (progress && ok_) {
      progress = false;
      struct Candidate {
        SizeExpr lo, hi;
        Span span;
        std::string what;
      };
      std::map<std::string, std::vector<Candidate>> candidates;
      for (const RangeRead& r : reads_) {
        if (r.guarded || r.conditional != conditional) continue;
        for (size_t d = 0; d < r.dims.size() && d < r.shape.size(); ++d) {
          const auto* unknown = single_unknown(r.dims[d]);
          if (!unknown || !index(unknown->first)) continue;
          SizeExpr rest_min, rest_max;
          if (!bounds(r.dims[d], unknown->first, rest_min, rest_max)) continue;
          int64_t c = unknown->second;
          const SizeExpr& size = r.shape[d];
          // 0 <= c*i + rest < size for i in [lo, hi): the largest such hi,
          // and the least lo when it is above 0 for every size with which
          // the statement runs (TC's rule: x(k - 1) gives k the range
          // [1, N + 1); from 0, such a read would be out of bounds for every
          // size). Not from a branch of a select, whose condition may be what
          // keeps the read in bounds.
          SizeExpr hi = c > 0 ? SizeExpr::floordiv(size - SizeExpr(1) - rest_max, c)
                              : SizeExpr::floordiv(rest_min, -c);
          SizeExpr lo(0);
          if (!conditional) {
            SizeExpr least = c > 0 ? ceil_div(SizeExpr(0) - rest_min, c)
                                   : ceil_div(rest_max - size + SizeExpr(1), -c);
            SizeFacts runs = known_ranges_nonempty();
            runs.assume_nonnegative(hi);  // [0, hi + 1) is not empty
            if (runs.proves_le(1, least)) lo = least;
          }
          candidates[unknown->first].push_back(
              {lo, hi + SizeExpr(1), r.spans[d], "the read of " + q(r.tensor)});
        }
      }
      for (auto& [ir_name, list] : candidates) {
        RangeIndex* ix = index(ir_name);
        SizeExpr lo = list[0].lo, hi = list[0].hi;
        for (size_t k = 1; k < list.size(); ++k) {
          if (lo == SizeExpr(0))
            lo = list[k].lo;
          else if (list[k].lo != SizeExpr(0))
            lo = SizeExpr::max(lo, list[k].lo);
          hi = SizeExpr::min(hi, list[k].hi);
        }
        ix->known = true;
        ix->lo = lo;
        ix->hi = hi;
        ix->origin = list[0].span;
        ix->origin_what = list[0].what;
        progress = true;
        if (!size_is_moderate(hi)) {
          ok_ = false;
          Diagnostic& e = diags_.error(ix->span, "the range of index " + q(ix->name) +
                                                     " is too large: " + range_text(lo, hi));
          e.notes.push_back({ix->origin, "it is inferred from " + ix->origin_what});
        }
      }
    }
  }

  void unsolved() {
    std::set<uint32_t> reported;  // one error per index expression with several unknowns
    for (RangeIndex& ix : indices_) {
      if (ix.known) continue;
      ok_ = false;
      // An unguarded read that uses it together with other unknown indices?
      const RangeRead* with_others = nullptr;
      size_t dim = 0;
      std::vector<Span> guarded;
      for (const RangeRead& r : reads_) {
        for (size_t d = 0; d < r.dims.size(); ++d) {
          if (!r.dims[d].coef(ix.ir_name)) continue;
          if (r.guarded) {
            guarded.push_back(r.span);
          } else if (!with_others) {
            with_others = &r;
            dim = d;
          }
        }
      }
      if (with_others) {
        if (!reported.insert(with_others->spans[dim].begin).second) continue;
        std::string others;
        for (const auto& [name, c] : with_others->dims[dim].terms) {
          RangeIndex* other = index(name);
          if (name == ix.ir_name || !other || other->known) continue;
          others += (others.empty() ? "" : ", ") + q(other->name);
        }
        Diagnostic& e = diags_.error(
            ix.span, "ambiguous range for index " + q(ix.name) +
                         ": it is only read in index expressions with other indices of unknown "
                         "range; add 'where " +
                         ix.name + " in lo:hi'");
        e.notes.push_back({with_others->spans[dim], q(ix.name) + " is read here with " + others});
      } else {
        Diagnostic& e = diags_.error(ix.span, "cannot infer the range of index " + q(ix.name) +
                                                  ": no unguarded read uses it; add 'where " +
                                                  ix.name + " in lo:hi'");
        for (Span s : guarded)
          e.notes.push_back({s, "a guarded read like this one does not constrain ranges"});
      }
    }
  }

  void check_ranges() {
    for (RangeIndex& ix : indices_) {
      if (ix.on_lhs && ix.lo != SizeExpr(0)) {
        ok_ = false;
        Diagnostic& e = diags_.error(
            ix.where ? ix.where_span : ix.span,
            "the range of output index " + q(ix.name) + " must start at 0, not " + ix.lo.str());
        if (!ix.where && ix.origin.valid)
          e.notes.push_back({ix.origin, q(ix.name) + " ranges over " + range_text(ix.lo, ix.hi) +
                                            ", inferred from " + ix.origin_what});
        e.notes.push_back(counted_from_zero(ix));
        continue;
      }
      if (!provably_le(ix.hi, ix.lo)) continue;
      ok_ = false;
      Diagnostic& e =
          diags_.error(ix.where ? ix.where_span : ix.span,
                       "empty range for index " + q(ix.name) + ": " + range_text(ix.lo, ix.hi));
      if (!ix.where && ix.origin.valid)
        e.notes.push_back({ix.origin, "the range of " + q(ix.name) + " is inferred from " +
                                          ix.origin_what + " here"});
    }
  }

  // Every unguarded read that is out of bounds for every size: its largest
  // value reaches the size, or its smallest is negative, whenever the
  // statement runs at all (all its ranges non-empty). A conditional read (in
  // a branch of select or '?:') is out of bounds only where its condition
  // holds, so only one that is out of bounds everywhere is reported: no
  // condition makes it valid. The rest is checked at run time.
  void check_reads() {
    const SizeFacts runs = known_ranges_nonempty();  // every range, by now
    for (const RangeRead& r : reads_) {
      if (r.guarded) continue;
      for (size_t d = 0; d < r.dims.size() && d < r.shape.size(); ++d) {
        if (d < r.computed.size() && r.computed[d]) continue;  // checked at run time
        SizeExpr mn, mx;
        if (!bounds(r.dims[d], "", mn, mx)) continue;
        const SizeExpr& size = r.shape[d];
        const std::string idx(diags_.file().slice(r.spans[d]));
        const std::string dim = " (dimension " + std::to_string(d) + ")";
        std::string problem;
        bool below = false;
        if (!r.conditional && runs.proves_le(size, mx)) {
          problem = "reads out of bounds: it reaches " + mx.str() + " but " + q(r.tensor) +
                    " has size " + size.str() + " in dimension " + std::to_string(d);
        } else if (!r.conditional && runs.proves_le(mn, SizeExpr(-1))) {
          problem = "reads out of bounds: it reaches " + mn.str() + " but indices start at 0" + dim;
          below = true;
        } else if (r.conditional && runs.proves_le(size, mn)) {
          problem = "is out of bounds wherever it is read: it is at least " + mn.str() + " but " +
                    q(r.tensor) + " has size " + size.str() + " in dimension " + std::to_string(d);
        } else if (r.conditional && runs.proves_le(mx, SizeExpr(-1))) {
          problem = "is out of bounds wherever it is read: it is at most " + mx.str() +
                    " but indices start at 0" + dim;
        }
        if (problem.empty()) continue;
        ok_ = false;
        Diagnostic& e =
            diags_.error(r.spans[d], "index " + q(idx) + " of " + q(r.tensor) + " " + problem);
        std::string names;
        bool left = false, where = false;
        for (const auto& [name, c] : r.dims[d].terms) {
          RangeIndex* ix = index(name);
          if (!ix) continue;
          names += (names.empty() ? "" : ", ") + q(ix->name);
          left |= ix->on_lhs;
          where |= ix->where.has_value();
          if (!ix->origin.valid) continue;
          const bool here = ix->origin.begin == r.spans[d].begin;
          e.notes.push_back(
              {here ? ix->span : ix->origin,
               q(ix->name) + " ranges over " + range_text(ix->lo, ix->hi) +
                   (here ? ", inferred from this read" : ", from " + ix->origin_what)});
        }
        std::string fix = "read " + q(r.tensor + "?(...)") + " to get 0 outside the bounds";
        if (below && left)
          fix = "left-side indices start at 0; shift the index expression, or " + fix;
        else if (!names.empty())
          fix = (where ? "narrow the where clause of " : "restrict ") + names +
                (where ? ", or " : " with a where clause, or ") + fix;
        e.notes.push_back({r.span, fix});
      }
    }
  }

  std::vector<RangeIndex>& indices_;
  const std::vector<RangeRead>& reads_;
  const std::map<std::string, int64_t>& loops_;
  Diagnostics& diags_;
  std::map<std::string, int> by_ir_;
  bool ok_ = true;
};

}  // namespace

bool infer_ranges(std::vector<RangeIndex>& indices, const std::vector<RangeRead>& reads,
                  const std::map<std::string, int64_t>& loop_trips, Diagnostics& diags) {
  return Inference(indices, reads, loop_trips, diags).run();
}

bool size_is_moderate(const ir::SizeExpr& e) {
  constexpr int64_t kLimit = int64_t(1) << 32;
  for (int64_t value : {0, 1}) {
    std::map<std::string, ir::SizeExpr> repl;
    for (const std::string& s : e.symbols()) repl[s] = ir::SizeExpr(value);
    std::optional<int64_t> c = e.substitute(repl).constant();
    if (!c || *c > kLimit || *c < -kLimit) return false;
  }
  return true;
}

}  // namespace tenet::lang::detail
