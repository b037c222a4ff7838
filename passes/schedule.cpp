// The `schedule` pass (schedule.h): loop orders that keep inner loops
// contiguous, and consecutive statements that share their outer loops.
#include "passes/schedule.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/affine.h"
#include "ir/mutator.h"
#include "ir/scatter_form.h"
#include "passes/contraction.h"
#include "passes/index_facts.h"
#include "passes/window_border.h"

namespace tenet::passes {

using namespace ir;

namespace {

/// Storage position of each dimension of `v` (0 = outermost).
std::vector<int> storage_positions(const Value& v) {
  std::vector<int> pos(size_t(v.rank()));
  for (int d = 0; d < v.rank(); ++d) pos[size_t(d)] = d;
  for (size_t p = 0; p < v.layout.size(); ++p) pos[size_t(v.layout[p])] = int(p);
  return pos;
}

/// The dimensions whose index mentions `index`.
std::vector<size_t> dims_mentioning(const std::vector<Affine>& indices, const std::string& index) {
  std::vector<size_t> out;
  for (size_t d = 0; d < indices.size(); ++d)
    if (indices[d].coef(index) != 0) out.push_back(d);
  return out;
}

/// Whether `index` steps through `tensor` with stride 1 at these indices: it
/// occurs in one dimension only, with coefficient +-1, the innermost stored.
bool unit_stride(const Value& tensor, const std::vector<Affine>& indices,
                 const std::string& index) {
  std::vector<size_t> dims = dims_mentioning(indices, index);
  if (dims.size() != 1) return false;
  const int64_t coef = indices[dims[0]].coef(index);
  return (coef == 1 || coef == -1) && storage_positions(tensor)[dims[0]] == tensor.rank() - 1;
}

/// Whether the indices of `block` (innermost last) run through `tensor` as
/// one contiguous block: each one it mentions is the whole index of exactly
/// one dimension, and those dimensions are its innermost ones, in order.
bool contiguous_block(const Value& tensor, const std::vector<Affine>& indices,
                      const std::vector<std::string>& block) {
  const std::vector<int> pos = storage_positions(tensor);
  std::vector<int> positions;
  for (const std::string& index : block) {
    std::vector<size_t> dims = dims_mentioning(indices, index);
    if (dims.empty()) continue;
    const Affine& a = indices[dims[0]];
    if (dims.size() != 1 || !a.is_plain_var()) return false;
    positions.push_back(pos[dims[0]]);
  }
  for (size_t q = 0; q < positions.size(); ++q)
    if (positions[q] != tensor.rank() - int(positions.size()) + int(q)) return false;
  return true;
}

/// Whether a computed index of `read` varies with `index` (a data-dependent
/// position: no stride at all).
bool computed_varies_with(const ExprNode& read, const std::string& index) {
  for (const Expr& c : read.computed)
    if (c && mentions_index(c, {index})) return true;
  return false;
}

/// The out indices a reduction should accumulate in place, inside its reduce
/// loops (a suffix of its out indices; empty to keep the default order).
std::vector<std::string> inner_block(const Compute& c) {
  if (c.op == ReduceOp::None || c.reduce.empty() || c.out.empty() || !c.result->layout.empty())
    return {};
  if (c.result->type == ElemType::F16) return {};  // in place, every step would round to half
  const std::vector<Expr> reads = reads_of(c.body);
  const std::string& last = c.reduce.back().index;
  const bool strided = std::any_of(reads.begin(), reads.end(), [&](const Expr& r) {
    return (!dims_mentioning(r->indices, last).empty() &&
            !unit_stride(*r->tensor, r->indices, last)) ||
           computed_varies_with(*r, last);
  });
  if (!strided) return {};
  const std::vector<Affine> at_out = plain_indices(c.out);
  std::vector<std::string> block;
  int64_t elements = 1;
  // out[0] stays outside (the parallel loop), unless it is the only out
  // index: a column sum (a bias gradient, dw(k) +=! dy(i, j, k)) then runs on
  // one thread, vectorised over k, instead of reading dy with stride K.
  const size_t innermost_first = c.out.size() == 1 ? 0 : 1;
  for (size_t p = c.out.size(); p-- > innermost_first;) {
    std::vector<std::string> candidate = {c.out[p].index};
    candidate.insert(candidate.end(), block.begin(), block.end());
    bool contiguous = contiguous_block(*c.result, at_out, candidate);
    for (const Expr& r : reads)
      contiguous = contiguous && contiguous_block(*r->tensor, r->indices, candidate);
    // Symbolic extents are assumed to be small: only constants count. A
    // float32 sum accumulates in a block of doubles (codegen) in which only
    // the outermost index may have a symbolic extent (it is tiled).
    const std::optional<int64_t> constant = c.out[p].extent().constant();
    const int64_t extent = constant.value_or(1);
    if (!contiguous || elements * extent > kMaxInnerBlock) break;
    elements *= extent;
    block = candidate;
    if (!constant && accumulates_in_double(c)) break;
  }
  return block;
}

/// The tile the last out loop of `c` steps by when its accumulators are
/// jammed (0: not jammed): a reduction in the default order whose terms come
/// from a long chain (passes/schedule.h, 3).
int64_t jam_tile(const Compute& c) {
  if (c.op == ReduceOp::None || c.reduce.empty() || c.out.empty() || index_scatter(c)) return 0;
  const std::string& last = c.out.back().index;
  const std::optional<int64_t> extent = c.out.back().extent().constant();
  if (!extent) return 0;
  int64_t terms = 1;
  for (const Dim& d : c.reduce) terms *= d.extent().constant().value_or(kMinJamTerms);
  if (terms < kMinJamTerms) return 0;
  // A comparison of indices with the last out index (a window's border)
  // would stay inside the reduce loops instead of narrowing them; a
  // comparison of data (a ReLU mask) narrows nothing either way.
  auto reads = [](const Expr& e) {
    return any_node(e, [](const Expr& n) { return n->kind == ExprKind::Read; });
  };
  if (any_node(c.body, [&](const Expr& e) {
        return (e->kind == ExprKind::Binary && is_comparison(e->binop) &&
                mentions_index(e, {last}) && !reads(e)) ||
               (e->kind == ExprKind::Read && e->guarded && mentions_index(e, {last}));
      }))
    return 0;
  for (int64_t tile = kJamTile; tile >= kMinJamTile; tile /= 2)
    if (*extent % tile == 0) return tile;
  return 0;
}

/// The vector lanes of `c`'s last reduce loop (0: none): a max, min or
/// float32 sum reduction in the default order whose last reduce index runs
/// with stride 1 through every read that mentions it, over at least
/// kMinLaneTerms terms (passes/schedule.h, 4).
int64_t lane_count(const Compute& c) {
  if (!may_run_in_lanes(c) || index_scatter(c)) return 0;
  const std::string& last = c.reduce.back().index;
  const std::optional<int64_t> extent = c.reduce.back().extent().constant();
  // A sum's lanes cost a fold of 15 additions per element: not on the chance
  // that a symbolic extent (a kernel's width) is long.
  if (!extent && c.op == ReduceOp::Sum) return 0;
  int64_t lanes = kLanes;
  if (extent && *extent < kMinLaneTerms) {
    // A short row (batch norm's over 16x16 or 8x8 images): the lanes run on
    // across the rows of the outer reduce loops, so they pay when those make
    // the terms many. As many lanes as divide the row, so none is left over.
    const int64_t enough = kMinLaneTerms * kLanes;
    int64_t terms = *extent;  // counted up to enough, each factor capped: no overflow
    for (size_t d = 0; d + 1 < c.reduce.size() && terms < enough; ++d)
      terms *= std::min(c.reduce[d].extent().constant().value_or(enough), enough);
    lanes = 0;
    for (int64_t n = kLanes; n >= kMinShortRowLanes && lanes == 0; n /= 2)
      if (*extent % n == 0) lanes = n;
    if (lanes == 0 || terms < enough) return 0;
  }
  for (const Expr& r : reads_of(c.body)) {
    if (dims_mentioning(r->indices, last).empty() && !computed_varies_with(*r, last)) continue;
    if (r->guarded || computed_varies_with(*r, last) || !unit_stride(*r->tensor, r->indices, last))
      return 0;
  }
  // A comparison of indices with it (a border) would stay inside the lanes;
  // a comparison of data read at it (a ReLU mask) is a select per term.
  if (tests_index(c.body, last)) return 0;
  return lanes;
}

/// A statement of the nest being built, and how many loops it shares with
/// the one before it.
struct Member {
  const Compute* compute;
  size_t outer;   // its out loops outside its reduction
  size_t shared;  // loops shared with the previous member (0 for the first)
};

/// The nest being built, with what shared_depth asks of it found without
/// walking the whole nest (it can hold every statement of a block).
class Nest {
 public:
  bool empty() const { return members_.empty(); }
  const Member& back() const { return members_.back(); }
  void clear() {
    members_.clear();
    position_.clear();
    minima_.clear();
  }
  void push(const Member& m) {
    const size_t q = members_.size();
    members_.push_back(m);
    position_[m.compute->result.get()] = q;
    while (!minima_.empty() && minima_.back().second >= m.shared) minima_.pop_back();
    minima_.push_back({q, m.shared});
  }
  /// The member whose result `v` is, if any.
  std::optional<size_t> member_of(const Value* v) const {
    auto it = position_.find(v);
    if (it == position_.end()) return std::nullopt;
    return it->second;
  }
  /// The fewest loops any member after `q` shares with its predecessor (none: SIZE_MAX).
  size_t min_shared_after(size_t q) const {
    // minima_ holds the members no later member shares fewer loops than, in
    // order: the first after q is the minimum over all members after q.
    auto it = std::upper_bound(minima_.begin(), minima_.end(), q,
                               [](size_t at, const auto& entry) { return at < entry.first; });
    return it == minima_.end() ? SIZE_MAX : it->second;
  }

 private:
  std::vector<Member> members_;
  std::unordered_map<const Value*, size_t> position_;
  std::vector<std::pair<size_t, size_t>> minima_;  // (member, shared), both increasing
};

/// The loops `c` (with `outer` outer out loops) can share with the last
/// member of `nest`: equal leading extents, lowered until every read of a
/// member's result uses the shared indices at the shared positions.
size_t shared_depth(const Nest& nest, const Compute& c, size_t outer) {
  const Member& prev = nest.back();
  size_t depth = std::min(prev.outer, outer);
  for (size_t j = 0; j < depth; ++j)
    if (c.out[j].extent() != prev.compute->out[j].extent()) depth = j;
  const std::vector<Expr> reads = reads_of(c.body);
  // Member q shares min(depth, shared of every later member) loops with c; a
  // read of it that differs from c's index at a shared position j limits
  // depth to j.
  const size_t extents_depth = depth;
  for (const Expr& r : reads) {
    std::optional<size_t> q = nest.member_of(r->tensor.get());
    if (!q) continue;
    const size_t common = std::min({depth, extents_depth, nest.min_shared_after(*q)});
    for (size_t j = 0; j < common; ++j) {
      const Affine& a = r->indices[j];
      if (!a.is_plain_var() || a.terms[0].first != c.out[j].index) {
        depth = std::min(depth, j);
        break;
      }
    }
  }
  return depth;
}

/// Consecutive jammed statements that run as one pass (passes/schedule.h, 3).
struct JamRun {
  const Compute* last = nullptr;  // the previous statement, when it was jammed
  int64_t tile = 0;
  std::set<const Value*> results;  // of the run's statements

  void clear() {
    last = nullptr;
    results.clear();
  }
  /// Whether jammed `c` joins the run: the same tile, out extents and reduce
  /// ranges, and none of the run's results read.
  bool joins(const Compute& c, int64_t jam) const {
    if (!last || jam != tile || c.out.size() != last->out.size() ||
        c.reduce.size() != last->reduce.size())
      return false;
    for (size_t d = 0; d < c.out.size(); ++d)
      if (c.out[d].extent() != last->out[d].extent()) return false;
    for (size_t d = 0; d < c.reduce.size(); ++d)
      if (c.reduce[d].lo != last->reduce[d].lo || c.reduce[d].hi != last->reduce[d].hi)
        return false;
    if (c.init && results.count(c.init.get())) return false;
    for (const Expr& r : reads_of(c.body))
      if (results.count(r->tensor.get())) return false;
    return true;
  }
};

/// The conjuncts of `cond` that compare `k` with `i`, each as `l < 0`.
void comparisons(const Expr& cond, const std::string& k, const std::string& i,
                 std::vector<Affine>& out) {
  if (cond->kind == ExprKind::Binary && cond->binop == BinOp::And) {
    comparisons(cond->args[0], k, i, out);
    comparisons(cond->args[1], k, i, out);
    return;
  }
  const std::optional<Affine> test = detail::as_negative_test(cond);
  if (test && test->coef(k) != 0 && test->coef(i) != 0) out.push_back(*test);
}

/// The out index a reduction may scan (lower/loops_scan.cpp), as its position
/// + 1 (0: none): one reduce index k, guarded by comparisons with an out
/// index i that bound k on one side, moving with i one way (`k <= i`, or
/// `k >= i` in its gradient), and terms that do not read i.
size_t scan_dim(const Compute& c) {
  if (c.op == ReduceOp::None || c.reduce.size() != 1) return 0;
  const std::string& k = c.reduce[0].index;
  std::vector<Expr> conds;
  Expr value = c.body;
  for (; value->kind == ExprKind::Select; value = value->args[1]) conds.push_back(value->args[0]);
  for (size_t p = 0; p < c.out.size(); ++p) {
    const std::string& i = c.out[p].index;
    std::vector<Affine> tests;
    for (const Expr& cond : conds) comparisons(cond, k, i, tests);
    bool one_way = !tests.empty() && !detail::mentions_any(value, {c.out[p]});
    for (const Affine& t : tests)
      one_way = one_way && (t.coef(k) > 0) == (tests[0].coef(k) > 0) &&
                (t.coef(i) > 0) == (tests[0].coef(i) > 0);
    if (one_way) return p + 1;
  }
  return 0;
}

void schedule_block(std::vector<Stmt>& body) {
  Nest nest;
  JamRun run;
  for (Stmt& s : body) {
    s.annotations.inner_loops = 0;
    s.annotations.nest = 0;
    s.annotations.jam = 0;
    s.annotations.lanes = 0;
    s.annotations.scan = 0;
    if (s.kind == StmtKind::Loop) {
      schedule_block(s.loop->body);
      nest.clear();
      run.clear();
      continue;
    }
    const Compute& c = s.compute;
    // A GEMM decided per call keeps its loops for small sizes: they follow the order.
    const ir::GemmPlan* gemm = s.annotations.gemm.get();
    const bool library = (gemm && gemm->per_call_min_work == 0) || s.annotations.conv;
    if (!library) s.annotations.scan = scan_dim(c);
    const std::vector<std::string> inner =
        s.annotations.scan > 0 ? std::vector<std::string>{} : inner_block(c);
    if (!library) s.annotations.inner_loops = inner.size();
    // Lanes make a max over a contiguous row one vector chain; they beat
    // jamming rows, which reads them with a stride.
    const bool plain = !library && inner.empty() && s.annotations.scan == 0;
    if (plain) s.annotations.lanes = lane_count(c);
    if (plain && s.annotations.lanes == 0) s.annotations.jam = jam_tile(c);
    if (gemm || s.annotations.conv || c.out.empty()) {
      nest.clear();
      run.clear();
      continue;
    }
    // A jammed loop steps by a tile of its own: it is shared only within a
    // run of jammed statements that share every loop (one pass over the terms).
    const int64_t jam = s.annotations.jam;
    size_t outer = c.out.size() - inner.size() - (jam > 0 ? 1 : 0);
    // A loop with a window's border stays the statement's own, for codegen
    // to peel (lower/peel.h): the nest shares only the loops outside it.
    if (jam == 0 && s.annotations.lanes == 0 && inner.empty()) {
      std::vector<size_t> loops(outer);
      for (size_t p = 0; p < outer; ++p) loops[p] = p;
      const std::vector<WindowBorder> borders = window_borders(c, loops);
      if (worth_peeling(borders))
        for (const WindowBorder& b : borders) outer = std::min(outer, b.dim);
    }
    // The scanned loop runs innermost and in its own order: the nest shares
    // only the loops before it.
    if (s.annotations.scan > 0) outer = std::min(outer, s.annotations.scan - 1);
    const size_t depth = nest.empty() ? 0 : shared_depth(nest, c, outer);
    const bool joins = jam > 0 && (outer == 0 || (depth == outer && nest.back().outer == outer)) &&
                       run.joins(c, jam);
    if (depth == 0) nest.clear();
    nest.push({&c, outer, depth});
    s.annotations.nest = joins ? outer + 1 : depth;
    if (!joins) run.clear();
    if (jam > 0) {
      run.last = &c;
      run.tile = jam;
      run.results.insert(c.result.get());
    }
  }
}

}  // namespace

void schedule(Function& fn) {
  schedule_block(fn.body);
}

}  // namespace tenet::passes
