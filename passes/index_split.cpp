// Index-set splitting of reductions at comparisons of a reduce index
// (see index_split.h).
#include "passes/index_split.h"

#include <optional>

#include "ir/builder.h"
#include "passes/index_facts.h"
#include "passes/simplify.h"

namespace tenet::passes {

using namespace ir;
using detail::IndexFacts;

namespace {

/// A comparison equivalent to `index < at` (its negation: `index >= at`).
struct SplitPoint {
  std::string index;
  SizeExpr at;
};

bool is_reduce_index(const Compute& c, const std::string& index) {
  for (const Dim& d : c.reduce)
    if (d.index == index) return true;
  return false;
}

/// The first comparison in `e` that bounds one reduce index of `c` by sizes
/// and that `facts` leave undecided.
std::optional<SplitPoint> find_split(const Expr& e, const Compute& c, const IndexFacts& facts) {
  if (auto l = detail::as_negative_test(e); l && l->terms.size() == 1 && !facts.decide(e)) {
    const auto& [index, coef] = *l->terms.begin();
    if (is_reduce_index(c, index) && coef == 1) return SplitPoint{index, -l->offset};
    if (is_reduce_index(c, index) && coef == -1) return SplitPoint{index, l->offset + 1};
  }
  for (const Expr& a : e->args)
    if (auto p = find_split(a, c, facts)) return p;
  return std::nullopt;
}

struct Piece {
  Compute compute;
  IndexFacts facts;
};

/// The piece of `p` where `point.index` lies in [lo, hi) (and below or at
/// least point.at, as `below` says); nullopt when provably empty.
std::optional<Piece> sub_piece(const Piece& p, const SplitPoint& point, bool below) {
  Piece sub = p;
  for (Dim& d : sub.compute.reduce) {
    if (d.index != point.index) continue;
    if (below && detail::known_le(d.lo, point.at) && detail::known_le(d.lo, d.hi))
      d.hi = detail::size_min(point.at, d.hi);  // min(at, hi) >= lo already
    else if (below)
      d.hi = detail::size_max(d.lo, detail::size_min(point.at, d.hi));
    else
      d.lo = detail::size_min(d.hi, detail::size_max(point.at, d.lo));
    if (detail::known_le(d.hi, d.lo)) return std::nullopt;
  }
  if (below)
    sub.facts.add_upper(point.index, point.at);
  else
    sub.facts.add_lower(point.index, point.at);
  sub.compute.body = simplify_expr(detail::refine(sub.compute.body, sub.facts));
  return sub;
}

/// Appends the pieces `p` splits into to `out` (at most `budget` of them).
void split(const Piece& p, int budget, std::vector<Piece>& out) {
  const std::optional<SplitPoint> point =
      budget >= 2 ? find_split(p.compute.body, p.compute, p.facts) : std::nullopt;
  if (!point) {
    out.push_back(p);
    return;
  }
  std::optional<Piece> lower = sub_piece(p, *point, true);
  std::optional<Piece> upper = sub_piece(p, *point, false);
  if (!lower && !upper) {
    out.push_back(p);
  } else if (!lower || !upper) {
    split(lower ? *lower : *upper, budget, out);
  } else {
    const size_t before = out.size();
    split(*lower, budget - 1, out);
    split(*upper, budget - int(out.size() - before), out);
  }
}

class Splitter {
 public:
  explicit Splitter(Function& fn) : fresh_(fn) {}

  void run(std::vector<Stmt>& body) {
    detail::rewrite_statements(body, IndexFacts{},
                               [this](Stmt& s, const IndexFacts& facts, std::vector<Stmt>& out) {
                                 if (s.compute.op == ReduceOp::None)
                                   out.push_back(std::move(s));
                                 else
                                   statement(s, facts, out);
                               });
  }

 private:
  void statement(const Stmt& s, const IndexFacts& outer, std::vector<Stmt>& out) {
    // A float16 result would round to half between its pieces: not split.
    if (s.compute.result->type == ElemType::F16) {
      out.push_back(s);
      return;
    }
    Piece whole{s.compute, outer};
    for (const Dim& d : s.compute.out) whole.facts.add_range(d.index, d.lo, d.hi);
    for (const Dim& d : s.compute.reduce) whole.facts.add_range(d.index, d.lo, d.hi);
    if (!find_split(s.compute.body, s.compute, whole.facts)) {
      out.push_back(s);
      return;
    }
    std::vector<Piece> pieces;
    split(whole, kMaxPieces, pieces);
    ValuePtr previous = s.compute.init;
    for (size_t i = 0; i < pieces.size(); ++i) {
      Stmt piece = s;
      piece.compute = pieces[i].compute;
      piece.compute.init = previous;
      if (i + 1 < pieces.size())
        piece.compute.result = fresh_.make(s.compute.result->name + "_part", s.compute.result->type,
                                           s.compute.result->shape, s.span);
      previous = piece.compute.result;
      out.push_back(std::move(piece));
    }
  }

  detail::FreshValues fresh_;
};

}  // namespace

void index_split(Function& fn) {
  Splitter(fn).run(fn.body);
}

}  // namespace tenet::passes
