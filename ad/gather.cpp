#include "ad/gather.h"

#include <cctype>
#include <map>
#include <optional>

#include "ad/expr_util.h"
#include "ir/affine.h"
#include "ir/builder.h"
#include "ir/mutator.h"
#include "support/error.h"

namespace tenet::ad {

using ir::Affine;
using ir::BinOp;
using ir::Dim;
using ir::Expr;
using ir::ExprKind;

namespace {

// Placeholder for the m-th index of R while solving; never a source name.
std::string placeholder(size_t m) {
  return "$" + std::to_string(m);
}

// Sort key of a pivot candidate: smaller is better (see gather.h).
struct PivotRank {
  int later_mentions;
  int constant_extent;  // 0 symbolic, 1 constant
  int64_t minus_extent;
  size_t position;
  auto operator<=>(const PivotRank&) const = default;
};

class Inverter {
 public:
  Inverter(const std::vector<Dim>& domain, const Expr& read, const std::set<std::string>& taken)
      : domain_(domain), read_(read), target_(*read->tensor), taken_(taken) {
    for (size_t i = 0; i < domain.size(); ++i) {
      position_[domain[i].index] = i;
      unsolved_.insert(domain[i].index);
    }
  }

  Gather run(const Expr& contribution) {
    solve();
    name_outputs();
    return build(contribution);
  }

 private:
  void solve() {
    for (size_t m = 0; m < read_->indices.size(); ++m) {
      if (read_->is_computed(m)) {  // data-dependent: y_m == index, a mask
        pivots_.push_back("");
        computed_masks_.emplace_back(m, read_->computed[m]);
        continue;
      }
      Affine e = ir::substitute(read_->indices[m], solution_);
      std::optional<std::string> pivot = choose_pivot(e, m);
      pivots_.push_back(pivot.value_or(""));
      if (!pivot) {
        masks_.emplace_back(m, e);
        continue;
      }
      // y_m = c*p + rest with c = +-1, so p = c * (y_m - rest).
      const Affine sol = ir::solve(e, *pivot, Affine::var(placeholder(m)));
      for (auto& [index, s] : solution_) s = ir::substitute(s, {{*pivot, sol}});
      solution_[*pivot] = sol;
      unsolved_.erase(*pivot);
    }
    for (auto& [m, e] : masks_) e = ir::substitute(e, solution_);
    for (auto& [m, e] : computed_masks_) e = ir::substitute(e, solution_);
  }

  std::optional<std::string> choose_pivot(const Affine& e, size_t m) const {
    std::optional<std::string> best;
    PivotRank best_rank{};
    for (const auto& [index, c] : e.terms) {
      if (!unsolved_.count(index) || (c != 1 && c != -1)) continue;
      const Dim& d = domain_[position_.at(index)];
      int later = 0;
      for (size_t k = m + 1; k < read_->indices.size(); ++k)
        later += read_->indices[k].coef(index) != 0;
      std::optional<int64_t> extent = d.extent().constant();
      PivotRank rank{later, extent ? 1 : 0, extent ? -*extent : 0, position_.at(index)};
      if (!best || rank < best_rank) {
        best = index;
        best_rank = rank;
      }
    }
    return best;
  }

  bool name_free(const std::string& name) const {
    return !position_.count(name) && !taken_.count(name) && !used_names_.count(name);
  }

  // R's index names: a pivot solved as exactly y_m over the same range keeps
  // its name (x(b, c, ..) gives dx(b, c, ..)); other dimensions are named
  // after R's size symbol (H gives h) or y<m>, never clashing with the
  // statement's indices.
  void name_outputs() {
    const size_t rank = read_->indices.size();
    names_.assign(rank, "");
    for (size_t m = 0; m < rank; ++m) {
      const std::string& p = pivots_[m];
      if (p.empty()) continue;
      const Dim& d = domain_[position_.at(p)];
      if (solution_.at(p).is_plain_var() && solution_.at(p).terms[0].first == placeholder(m) &&
          d.lo == ir::SizeExpr(0) && d.hi == target_.shape[m] && !used_names_.count(p)) {
        names_[m] = p;
        used_names_.insert(p);
      }
    }
    for (size_t m = 0; m < rank; ++m) {
      if (!names_[m].empty()) continue;
      std::string base = "y" + std::to_string(m);
      if (auto sym = target_.shape[m].as_symbol()) {
        base.clear();
        for (char ch : *sym) base += char(std::tolower(static_cast<unsigned char>(ch)));
      }
      std::string name = base;
      for (int k = 2; !name_free(name); ++k) name = base + std::to_string(k);
      names_[m] = name;
      used_names_.insert(name);
    }
    std::map<std::string, Affine> rename;
    for (size_t m = 0; m < rank; ++m) rename[placeholder(m)] = Affine::var(names_[m]);
    for (auto& [index, s] : solution_) s = ir::substitute(s, rename);
    for (auto& [m, e] : masks_) e = ir::substitute(e, rename);
    for (auto& [m, e] : computed_masks_) e = ir::substitute(e, rename);
  }

  // A solved pivot is in range by construction when it equals an index of R
  // whose range is exactly the pivot's original range.
  bool in_range_by_domain(const std::string& pivot) const {
    const Dim& d = domain_[position_.at(pivot)];
    const Affine& s = solution_.at(pivot);
    if (d.lo != ir::SizeExpr(0) || !s.is_plain_var()) return false;
    for (size_t m = 0; m < names_.size(); ++m)
      if (names_[m] == s.terms[0].first) return target_.shape[m] == d.hi;
    return false;
  }

  // Whether a guarded read among the top-level factors of `g` is zero exactly
  // when the pivot leaves [0, hi) (and no factor can turn that zero into NaN).
  static bool implied_by_guarded_factor(const Expr& g, const Affine& pivot_value,
                                        const ir::SizeExpr& hi) {
    if (!ir::is_total(g)) return false;
    for (const Expr& f : factors(g)) {
      if (f->kind != ExprKind::Read || !f->guarded) continue;
      for (size_t k = 0; k < f->indices.size(); ++k)
        if (ir::equal(f->indices[k], pivot_value) && f->tensor->shape[k] == hi) return true;
    }
    return false;
  }

  Gather build(const Expr& contribution) {
    Gather out;
    for (size_t m = 0; m < names_.size(); ++m)
      out.out.push_back(Dim{names_[m], 0, target_.shape[m]});
    for (const Dim& d : domain_)
      if (unsolved_.count(d.index)) out.reduce.push_back(d);

    Rewrite rw;
    rw.indices = solution_;
    for (const auto& [pivot, s] : solution_)
      if (!in_range_by_domain(pivot)) rw.guard_indices.insert(pivot);
    for (const Dim& d : out.out) rw.bounded[d.index] = d.hi;
    for (const Dim& d : out.reduce)
      if (d.lo == ir::SizeExpr(0)) rw.bounded[d.index] = d.hi;
    Expr g = rewrite(contribution, rw);

    Expr cond;
    for (const Dim& d : domain_) {  // range guards, in domain order
      if (!rw.guard_indices.count(d.index)) continue;
      const Affine& s = solution_.at(d.index);
      if (d.lo == ir::SizeExpr(0) && implied_by_guarded_factor(g, s, d.hi)) continue;
      Expr value = ir::affine_value(s);
      bool nonnegative = d.lo == ir::SizeExpr(0) && s.is_plain_var() &&
                         rw.bounded.count(s.terms[0].first);  // an index starting at 0
      if (!nonnegative)
        cond =
            both(cond, ir::make_binary(BinOp::Ge, value, ir::affine_value(ir::affine_const(d.lo))));
      cond =
          both(cond, ir::make_binary(BinOp::Lt, value, ir::affine_value(ir::affine_const(d.hi))));
    }
    for (const auto& [m, e] : masks_)
      cond = both(cond, ir::make_binary(BinOp::Eq, ir::make_index(names_[m]), ir::affine_value(e)));
    // A computed index: its equality mask is a scatter, which lower/scatter.h
    // recognises (codegen then runs over the contributions, not R's elements).
    for (const auto& [m, e] : computed_masks_)
      cond = both(cond, ir::make_binary(BinOp::Eq, ir::make_index(names_[m]), e));

    out.body = cond ? select(cond, g, constant(0, g->type)) : g;
    if (!computed_masks_.empty())
      out.kind = "scatter";
    else if (!masks_.empty())
      out.kind = "masked gather";
    else if (!out.reduce.empty() || !rw.guard_indices.empty())
      out.kind = "gather";
    else
      out.kind = "adjoint";
    return out;
  }

  const std::vector<Dim>& domain_;
  const Expr& read_;
  const ir::Value& target_;
  const std::set<std::string>& taken_;
  std::map<std::string, size_t> position_;
  std::set<std::string> unsolved_;
  std::map<std::string, Affine> solution_;  // pivot -> affine in R's indices and free indices
  std::vector<std::string> pivots_;         // per dimension of R; "" where masked
  std::vector<std::pair<size_t, Affine>> masks_;
  std::vector<std::pair<size_t, Expr>> computed_masks_;  // dimensions with a computed index
  std::vector<std::string> names_;
  std::set<std::string> used_names_;
};

}  // namespace

Gather invert_read(const std::vector<Dim>& domain, const Expr& read, const Expr& contribution,
                   const std::set<std::string>& taken_names) {
  TENET_ASSERT(read->kind == ExprKind::Read, "invert_read of a non-read");
  return Inverter(domain, read, taken_names).run(contribution);
}

}  // namespace tenet::ad
