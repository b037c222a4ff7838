// Selects on out indices hoisted out of sum reductions (see hoist.h).
#include "passes/hoist.h"

#include <optional>

#include "ir/affine.h"
#include "ir/builder.h"
#include "passes/index_facts.h"
#include "passes/simplify.h"

namespace tenet::passes {

using namespace ir;
using detail::IndexFacts;

namespace {

bool is_zero(const Expr& e) {
  return e->kind == ExprKind::Const && e->value == 0;
}

/// A select that may move out of a reduction over `reduce`.
bool hoistable(const Expr& e, const std::vector<Dim>& reduce) {
  return e->kind == ExprKind::Select && !detail::mentions_any(e->args[0], reduce) &&
         !detail::reads_tensor(e->args[0]);
}

bool has_zero_leaf(const Expr& tree, const std::vector<Dim>& reduce) {
  if (!hoistable(tree, reduce)) return is_zero(tree);
  return has_zero_leaf(tree->args[1], reduce) || has_zero_leaf(tree->args[2], reduce);
}

/// The select tree with each leaf replaced by f(leaf), f called on the
/// leaves in order (then before else).
template <typename F>
Expr map_leaves(const Expr& tree, const std::vector<Dim>& reduce, const F& f) {
  if (!hoistable(tree, reduce)) return f(tree);
  Expr then_value = map_leaves(tree->args[1], reduce, f);
  Expr else_value = map_leaves(tree->args[2], reduce, f);
  return make_select(tree->args[0], then_value, else_value);
}

/// `e` with hoistable selects moved to the top, through products.
Expr distribute(const Expr& e, const std::vector<Dim>& reduce) {
  if (hoistable(e, reduce))
    return make_select(e->args[0], distribute(e->args[1], reduce), distribute(e->args[2], reduce));
  if (e->kind != ExprKind::Binary || e->binop != BinOp::Mul) return e;
  for (size_t side : {0, 1}) {
    Expr factor = distribute(e->args[side], reduce);
    if (!hoistable(factor, reduce) || has_zero_leaf(factor, reduce)) continue;
    const Expr other = e->args[1 - side];
    return map_leaves(factor, reduce, [&](const Expr& leaf) {
      return distribute(
          side == 0 ? make_binary(BinOp::Mul, leaf, other) : make_binary(BinOp::Mul, other, leaf),
          reduce);
    });
  }
  return e;
}

struct Leaf {
  Expr expr;
  IndexFacts facts;        // ranges and the conditions on the path to it
  std::vector<Expr> path;  // those conditions (negated on else branches)
};

void collect_leaves(const Expr& tree, const std::vector<Dim>& reduce, const Leaf& at,
                    std::vector<Leaf>& out) {
  if (!hoistable(tree, reduce)) {
    out.push_back({tree, at.facts, at.path});
    return;
  }
  const Expr& cond = tree->args[0];
  Leaf then_at = at, else_at = at;
  then_at.facts.assume(cond);
  then_at.path.push_back(cond);
  else_at.facts.assume_not(cond);
  else_at.path.push_back(make_unary(UnOp::Not, cond));
  collect_leaves(tree->args[1], reduce, then_at, out);
  collect_leaves(tree->args[2], reduce, else_at, out);
}

/// The part of one out index's range that a leaf's path allows:
/// [shift, shift + extent), and the bounds of the shifted index.
struct Restriction {
  SizeExpr shift;
  SizeExpr extent;
  std::vector<SizeExpr> uppers;  // of the shifted index
};

Restriction restrict_range(const Dim& d, const IndexFacts& path) {
  const detail::Bounds* b = path.bounds(d.index);
  Restriction r{SizeExpr(0), d.hi, {d.hi}};
  if (!b) return r;
  // The largest lower bound, when one is provably >= all others (0 among them).
  for (const SizeExpr& lo : b->lower) {
    bool largest = detail::known_le(SizeExpr(0), lo);
    for (const SizeExpr& other : b->lower) largest = largest && detail::known_le(other, lo);
    if (largest) r.shift = lo;
  }
  // The upper bounds that no other one provably implies.
  std::vector<SizeExpr> tight;
  for (size_t i = 0; i < b->upper.size(); ++i) {
    bool implied = false;
    for (size_t k = 0; k < b->upper.size(); ++k) {
      const bool at_most = detail::known_le(b->upper[k], b->upper[i]);
      // Of two equal bounds, the first one stays.
      implied = implied || (k != i && at_most && (k < i || b->upper[k] != b->upper[i]));
    }
    if (!implied) tight.push_back(b->upper[i]);
  }
  r.uppers.clear();
  std::optional<SizeExpr> extent;
  bool nonneg = true;  // every upper bound is at least the shift, so their min is
  for (const SizeExpr& hi : tight) {
    r.uppers.push_back(hi - r.shift);
    extent = extent ? detail::size_min(*extent, hi - r.shift) : hi - r.shift;
    nonneg = nonneg && detail::provably_nonneg(hi - r.shift);
  }
  r.extent = nonneg ? *extent : detail::size_max(SizeExpr(0), *extent);
  return r;
}

class Hoister {
 public:
  explicit Hoister(Function& fn) : fresh_(fn) {}

  void run(std::vector<Stmt>& body) {
    detail::rewrite_statements(body, IndexFacts{},
                               [this](Stmt& s, const IndexFacts& facts, std::vector<Stmt>& out) {
                                 if (!statement(s, facts, out)) out.push_back(std::move(s));
                               });
  }

 private:
  /// Appends the rewritten statement(s) for `s` to `out`; false to keep `s`.
  bool statement(const Stmt& s, const IndexFacts& outer, std::vector<Stmt>& out) {
    const Compute& c = s.compute;
    if (c.op != ReduceOp::Sum || c.reduce.empty() || c.init) return false;
    const Expr tree = distribute(c.body, c.reduce);
    if (!hoistable(tree, c.reduce)) return false;
    IndexFacts facts = outer;
    for (const Dim& d : c.out) facts.add_range(d.index, d.lo, d.hi);
    std::vector<Leaf> leaves;
    collect_leaves(tree, c.reduce, Leaf{nullptr, facts, {}}, leaves);

    std::vector<Stmt> sums;
    std::vector<Expr> replacement;
    for (const Leaf& leaf : leaves) {
      if (is_zero(leaf.expr)) {
        replacement.push_back(make_const(0, compute_type(c.result->type)));  // a sum of zeros
        continue;
      }
      auto sum = sum_statement(s, leaf, outer);
      if (!sum) return false;
      replacement.push_back(sum->second);
      sums.push_back(std::move(sum->first));
    }
    size_t next = 0;
    Expr body = map_leaves(tree, c.reduce, [&](const Expr&) { return replacement[next++]; });
    Stmt select = s;
    select.compute.reduce.clear();
    select.compute.op = ReduceOp::None;
    select.compute.body = simplify_expr(detail::refine(body, facts));
    for (Stmt& sum : sums) out.push_back(std::move(sum));
    out.push_back(std::move(select));
    return true;
  }

  /// The statement summing one leaf and the read of it that replaces the
  /// leaf; nullopt when the sum could fail where the original did not.
  std::optional<std::pair<Stmt, Expr>> sum_statement(const Stmt& s, const Leaf& leaf,
                                                     const IndexFacts& outer) {
    const Compute& c = s.compute;
    IndexFacts facts = outer;
    std::vector<Dim> out;
    std::vector<Affine> at;
    Expr body = leaf.expr;
    std::vector<Expr> path = leaf.path;
    for (const Dim& d : c.out) {
      const Restriction r = restrict_range(d, leaf.facts);
      out.push_back({d.index, SizeExpr(0), r.extent});
      facts.add_lower(d.index, SizeExpr(0));
      for (const SizeExpr& hi : r.uppers) facts.add_upper(d.index, hi);
      if (r.shift != SizeExpr(0)) {
        body = detail::shift_index(body, d.index, r.shift);
        for (Expr& cond : path) cond = detail::shift_index(cond, d.index, r.shift);
      }
      at.push_back(Affine::var(d.index) - affine_const(r.shift));
    }
    // The sum covers only where the path's conditions hold: no work the original skipped.
    for (const Expr& cond : path)
      if (facts.decide(cond) != true) return std::nullopt;
    for (const Dim& d : c.reduce) facts.add_range(d.index, d.lo, d.hi);
    body = simplify_expr(detail::refine(body, facts));
    if (!detail::safe_to_evaluate(body, facts)) return std::nullopt;

    std::vector<SizeExpr> shape;
    for (const Dim& d : out) shape.push_back(d.hi);
    Stmt sum = s;
    // (A float16 result's partial sums stay float32: it rounds once, at its store.)
    sum.compute.result =
        fresh_.make(c.result->name + "_sum", compute_type(c.result->type), shape, s.span);
    sum.compute.out = out;
    sum.compute.body = body;
    return std::make_pair(std::move(sum), make_read(sum.compute.result, at));
  }

  detail::FreshValues fresh_;
};

}  // namespace

void hoist(Function& fn) {
  Hoister(fn).run(fn.body);
}

}  // namespace tenet::passes
