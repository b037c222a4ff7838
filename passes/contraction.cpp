// The `contraction` pass: recognises A * B contractions, plans them as GEMMs
// (which index is a row, a column, a batch loop or the sum; which matrix is
// used in place and which is packed) and marks the large ones.
#include "passes/contraction.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/affine.h"
#include "ir/conv_plan.h"
#include "passes/contraction_split.h"
#include "support/error.h"

namespace tenet::passes {

namespace {

/// A tensor as a matrix candidate: its value and the affine index of each dimension.
struct Access {
  const ir::Value* tensor = nullptr;
  const std::vector<ir::Affine>* indices = nullptr;
  bool guarded = false;
};

Access access_of(const ir::ExprNode& read) {
  return {read.tensor.get(), &read.indices, read.guarded};
}

bool mentions(const Access& t, const std::string& index) {
  for (const ir::Affine& a : *t.indices)
    if (a.coef(index) != 0) return true;
  return false;
}

using ir::GemmMatrix;
using ir::GemmPlan;

/// Storage position of each dimension (0 = outermost).
std::vector<int> storage_positions(const ir::Value& v) {
  std::vector<int> pos(size_t(v.rank()));
  for (int d = 0; d < v.rank(); ++d) pos[size_t(d)] = d;
  for (size_t p = 0; p < v.layout.size(); ++p) pos[size_t(v.layout[p])] = int(p);
  return pos;
}

/// `dims` sorted by where `t` first reads each (outermost first); dims it
/// does not read keep their order, after the others.
std::vector<ir::Dim> storage_order(const std::vector<ir::Dim>& dims, const Access& t) {
  const std::vector<int> pos = storage_positions(*t.tensor);
  auto first_position = [&](const ir::Dim& d) {
    int best = int(pos.size());
    for (size_t i = 0; i < t.indices->size(); ++i)
      if ((*t.indices)[i].coef(d.index) != 0) best = std::min(best, pos[i]);
    return best;
  };
  std::vector<ir::Dim> out = dims;
  std::stable_sort(out.begin(), out.end(), [&](const ir::Dim& x, const ir::Dim& y) {
    return first_position(x) < first_position(y);
  });
  return out;
}

/// The dimension of `t` indexed by exactly `index`, or -1.
int plain_dim(const Access& t, const std::string& index) {
  for (size_t d = 0; d < t.indices->size(); ++d) {
    const ir::Affine& a = (*t.indices)[d];
    if (a.is_plain_var() && a.terms[0].first == index) return int(d);
  }
  return -1;
}

/// `t` viewed in place as a (rows x cols) matrix, or nullopt when it has to
/// be packed: every dimension that mentions a row or column index must be
/// exactly that index; each group must occupy adjacent storage positions in
/// group order, all but its first dimension over their full extent; and one
/// group must be innermost (or empty).
std::optional<GemmMatrix> view_in_place(const Access& t, const std::vector<ir::Dim>& rows,
                                        const std::vector<ir::Dim>& cols) {
  if (t.guarded) return std::nullopt;
  std::set<std::string> group;
  for (const auto* g : {&rows, &cols})
    for (const ir::Dim& d : *g) group.insert(d.index);
  for (const ir::Affine& a : *t.indices) {
    int group_terms = 0;
    for (const auto& term : a.terms) group_terms += group.count(term.first) ? 1 : 0;
    if (group_terms > 0 && !a.is_plain_var()) return std::nullopt;
  }
  const std::vector<int> pos = storage_positions(*t.tensor);
  // Each group index in exactly one (plain) dimension, groups contiguous.
  auto dims_of = [&](const std::vector<ir::Dim>& g) -> std::optional<std::vector<int>> {
    std::vector<int> dims;
    for (size_t i = 0; i < g.size(); ++i) {
      const int d = plain_dim(t, g[i].index);
      if (d < 0) return std::nullopt;
      int uses = 0;
      for (const ir::Affine& a : *t.indices) uses += a.coef(g[i].index) != 0 ? 1 : 0;
      if (uses != 1) return std::nullopt;
      if (i > 0) {
        const bool adjacent = pos[size_t(d)] == pos[size_t(dims.back())] + 1;
        const bool full = g[i].lo == ir::SizeExpr(0) && g[i].hi == t.tensor->shape[size_t(d)];
        if (!adjacent || !full) return std::nullopt;
      }
      dims.push_back(d);
    }
    return dims;
  };
  const auto row_dims = dims_of(rows), col_dims = dims_of(cols);
  if (!row_dims || !col_dims) return std::nullopt;
  const int innermost = t.tensor->rank() - 1;
  auto innermost_group = [&](const std::vector<int>& dims) {
    return !dims.empty() && pos[size_t(dims.back())] == innermost;
  };
  GemmMatrix m;
  if (innermost_group(*col_dims) || col_dims->empty()) {
    m.transposed = false;
    m.ld_dim = ir::gemm_leading_dim(*t.indices, rows, cols, false);
  } else if (innermost_group(*row_dims) || row_dims->empty()) {
    m.transposed = true;
    m.ld_dim = ir::gemm_leading_dim(*t.indices, rows, cols, true);
  } else {
    return std::nullopt;
  }
  return m;
}

/// A conservative size for choosing between plans: a symbolic extent counts
/// as large (batch sizes, image sizes).
int64_t estimate(const ir::SizeExpr& e) {
  if (auto k = e.constant()) return *k;
  return int64_t(1) << 30;
}

ir::SizeExpr extent_product(const std::vector<ir::Dim>& dims) {
  ir::SizeExpr p = 1;
  for (const ir::Dim& d : dims) p = p * d.extent();
  return p;
}

enum class Owner { X, Y, Both };

/// The plan for a statement, once the roles are chosen: `a_read` gives the
/// rows, `b_read` the columns.
GemmPlan make_plan(const ir::Compute& c, const ir::ExprNode& a_read, const ir::ExprNode& b_read,
                   std::vector<ir::Dim> loops, std::vector<ir::Dim> m, std::vector<ir::Dim> n,
                   GemmMatrix c_view) {
  GemmPlan p;
  p.loops = std::move(loops);
  p.m = std::move(m);
  p.n = std::move(n);
  p.c = c_view;
  const Access a = access_of(a_read), b = access_of(b_read);
  // The sum's order: as A stores it when A can then be used in place, else as B does.
  p.k = storage_order(c.reduce, a);
  std::optional<GemmMatrix> a_view = view_in_place(a, p.m, p.k);
  if (!a_view) {
    p.k = storage_order(c.reduce, b);
    a_view = view_in_place(a, p.m, p.k);
  }
  std::optional<GemmMatrix> b_view = view_in_place(b, p.k, p.n);
  p.a = a_view ? *a_view : GemmMatrix{};
  p.a.packed = !a_view;
  p.b = b_view ? *b_view : GemmMatrix{};
  p.b.packed = !b_view;
  p.a.factor = &a_read == c.body->args[0].get() ? 0 : 1;
  p.b.factor = 1 - p.a.factor;
  p.work = extent_product(p.m) * extent_product(p.n) * extent_product(p.k);
  return p;
}

/// c's out indices, in the result's storage order, each with the factor that
/// reads it (x, y or both).
struct OutOwners {
  std::vector<ir::Dim> order;
  std::map<std::string, Owner> owner;
  std::vector<ir::Dim> xs, ys, both;  // by owner, each in the result's storage order
};

/// The owners of c's out indices, or none when a factor reads none of them.
std::optional<OutOwners> out_owners(const ir::Compute& c, const Access& xa, const Access& ya) {
  OutOwners o;
  const std::vector<int> pos = storage_positions(*c.result);
  std::vector<int> by_position(c.out.size());
  for (size_t d = 0; d < c.out.size(); ++d) by_position[size_t(pos[d])] = int(d);
  for (int d : by_position) {
    const ir::Dim& dim = c.out[size_t(d)];
    const bool in_x = mentions(xa, dim.index), in_y = mentions(ya, dim.index);
    if (!in_x && !in_y) return {};
    o.owner[dim.index] = in_x && in_y ? Owner::Both : in_x ? Owner::X : Owner::Y;
    (in_x && in_y ? o.both : in_x ? o.xs : o.ys).push_back(dim);
    o.order.push_back(dim);
  }
  return o;
}

/// A plan that writes C in place, when C's innermost index belongs to one factor
/// (which gives the columns) and C's rows and columns form a matrix view of it.
std::optional<GemmPlan> plan_c_in_place(const ir::Compute& c, const ir::ExprNode& x,
                                        const ir::ExprNode& y, const OutOwners& o) {
  const std::vector<ir::Affine> out_indices = ir::plain_indices(c.out);
  const Access result{c.result.get(), &out_indices, false};
  const Owner inner = o.owner.at(o.order.back().index);
  if (inner == Owner::Both) return {};
  const ir::ExprNode& col_read = inner == Owner::X ? x : y;
  const ir::ExprNode& row_read = inner == Owner::X ? y : x;
  const std::vector<ir::Dim>& cols = inner == Owner::X ? o.xs : o.ys;
  const std::vector<ir::Dim>& rows = inner == Owner::X ? o.ys : o.xs;
  // 1. One GEMM per batch index, C in place.
  if (auto c_view = view_in_place(result, rows, cols); c_view && !c_view->transposed)
    return make_plan(c, row_read, col_read, o.both, rows, cols, *c_view);
  // 2. Loops also over the outer indices of the factors: the innermost run
  // of columns, the run of rows just outside it.
  std::vector<ir::Dim> run_cols, run_rows, loops;
  size_t i = o.order.size();
  while (i > 0 && o.owner.at(o.order[i - 1].index) == inner)
    run_cols.insert(run_cols.begin(), o.order[--i]);
  const Owner row_owner = inner == Owner::X ? Owner::Y : Owner::X;
  while (i > 0 && o.owner.at(o.order[i - 1].index) == row_owner)
    run_rows.insert(run_rows.begin(), o.order[--i]);
  for (size_t j = 0; j < i; ++j) loops.push_back(o.order[j]);
  const bool wide = estimate(extent_product(run_rows)) >= kMinLoopedGemmSide &&
                    estimate(extent_product(run_cols)) >= kMinLoopedGemmSide;
  if (wide) {
    if (auto c_view = view_in_place(result, run_rows, run_cols); c_view && !c_view->transposed)
      return make_plan(c, row_read, col_read, loops, run_rows, run_cols, *c_view);
  }
  return {};
}

/// A size with every symbol at a typical 64 (batch and image sizes), for ratios.
int64_t typical(const ir::SizeExpr& e) {
  std::map<std::string, ir::SizeExpr> at;
  for (const std::string& s : e.symbols()) at[s] = ir::SizeExpr(64);
  return e.substitute(at).constant().value_or(int64_t(1) << 30);
}

/// Whether packing `read` as the matrices of `loops` x `rows` x `cols` would
/// copy its tensor more than kMaxPackExpansion times over: a small factor
/// read through a window, such as a depthwise convolution's 3x3 weight in its
/// input gradient (a 256 x 1024 matrix per channel, under 1% non-zero), where
/// loops over the window beat a GEMM over the zeros.
bool packs_sparse(const GemmMatrix& m, const ir::ExprNode& read, const std::vector<ir::Dim>& loops,
                  const std::vector<ir::Dim>& rows, const std::vector<ir::Dim>& cols) {
  if (!m.packed) return false;
  const Access a = access_of(read);
  ir::SizeExpr packed = extent_product(rows) * extent_product(cols);
  for (const ir::Dim& d : loops)
    if (mentions(a, d.index)) packed = packed * d.extent();
  ir::SizeExpr source = 1;
  for (const ir::SizeExpr& d : a.tensor->shape) source = source * d;
  return typical(packed) > kMaxPackExpansion * typical(source);
}

/// `plan` unless one of its packed factors is mostly zeros (packs_sparse).
std::optional<GemmPlan> unless_sparse(const ir::Compute& c, std::optional<GemmPlan> plan) {
  if (!plan) return plan;
  const ir::ExprNode& a = *c.body->args[size_t(plan->a.factor)];
  const ir::ExprNode& b = *c.body->args[size_t(plan->b.factor)];
  if (packs_sparse(plan->a, a, plan->loops, plan->m, plan->k) ||
      packs_sparse(plan->b, b, plan->loops, plan->k, plan->n))
    return std::nullopt;
  return plan;
}

}  // namespace

std::optional<GemmPlan> plan_contraction(const ir::Compute& c) {
  if (c.op != ir::ReduceOp::Sum || !is_float(c.result->type) || c.reduce.empty()) return {};
  if (c.result->type == ElemType::F16) return {};  // the GEMM library has no float16 storage
  if (std::optional<ir::SplitGather> split = detail::split_gather(c)) {
    // The product has no strided guarded dimension left, so this recursion ends.
    // A product that would need a split of its own (the input gradient of a
    // grouped convolution, whose weight is read at y1 - 8*j) is not a GEMM of
    // the split: the lowering gathers one set of columns (RegNet's internal
    // error, "index y1 is not in scope", came from the inner split's columns).
    std::optional<GemmPlan> plan = plan_contraction(split->product);
    if (plan && !plan->split) {
      plan->split = std::make_shared<const ir::SplitGather>(std::move(*split));
      return plan;
    }
  }
  const ir::ExprNode& body = *c.body;
  if (body.kind != ir::ExprKind::Binary || body.binop != ir::BinOp::Mul) return {};
  const ir::ExprNode& x = *body.args[0];
  const ir::ExprNode& y = *body.args[1];
  for (const ir::ExprNode* r : {&x, &y})
    if (r->kind != ir::ExprKind::Read || r->tensor->type != c.result->type ||
        r->has_computed_index())
      return {};
  const Access xa = access_of(x), ya = access_of(y);

  const std::optional<OutOwners> o = out_owners(c, xa, ya);
  if (!o) return {};
  for (const ir::Dim& d : c.reduce)
    if (!mentions(xa, d.index) && !mentions(ya, d.index)) return {};
  if (o->xs.empty() && o->ys.empty()) return {};  // dot products: loops do them well
  // Matrix-vector products with a short sum (a depthwise convolution: 9 taps
  // per output) are as fast as loops, without packing a copy of the matrix.
  if (o->xs.empty() || o->ys.empty()) {
    std::optional<int64_t> k = extent_product(c.reduce).constant();
    if (k && *k < kMinMatrixVectorSum) return {};
  }
  if (std::optional<GemmPlan> in_place = plan_c_in_place(c, x, y, *o))
    return unless_sparse(c, in_place);
  // 3. One GEMM per batch index into a packed C, copied into the result after.
  GemmMatrix packed_c;
  packed_c.packed = true;
  return unless_sparse(
      c, make_plan(c, x, y, o->both, storage_order(o->xs, xa), storage_order(o->ys, ya), packed_c));
}

namespace {

/// The least M * N * K can be when every extent is a constant or a single
/// size parameter (which is at least 1 when the GEMM does anything), else nullopt.
std::optional<int64_t> minimum_work(const GemmPlan& p) {
  int64_t work = 1;
  for (const auto* group : {&p.m, &p.n, &p.k}) {
    for (const ir::Dim& d : *group) {
      const ir::SizeExpr extent = d.extent();
      if (auto k = extent.constant())
        work *= *k;
      else if (!extent.as_symbol())
        return std::nullopt;
    }
  }
  return work;
}

}  // namespace

bool library_convolution(const ir::ConvPlan& plan) {
  // The windows of one group's channels.
  const std::optional<int64_t> g = plan.groups.constant(), in = plan.in_channels.constant(),
                               out = plan.out_channels.constant(), kh = plan.kernel_h.constant(),
                               kw = plan.kernel_w.constant();
  if (!g || !in || !out || !kh || !kw) return false;
  const int64_t c = *in / *g, o = *out / *g;
  const int64_t most =
      plan.role == ir::ConvRole::Forward ? kMaxLibraryConvWindow : kMaxLibraryConvGradientWindow;
  // A few output positions per image over many channels (ResNet's last stage
  // on small images: 2x2 outputs, 512 channels): im2col is small and one GEMM
  // beats the library's direct kernel.
  const std::optional<int64_t> h = plan.out_h.constant(), w = plan.out_w.constant();
  if (h && w && *h * *w < kMinLibraryConvOutputs && *g == 1 && c * *kh * *kw >= 1024) return false;
  return c * *kh * *kw <= most && o * *kh * *kw <= most;
}

namespace {

void annotate(std::vector<ir::Stmt>& body, bool convolutions) {
  for (ir::Stmt& s : body) {
    if (s.kind == ir::StmtKind::Loop) {
      annotate(s.loop->body, convolutions);
      continue;
    }
    s.annotations.gemm = nullptr;
    s.annotations.conv = nullptr;
    if (std::optional<ir::ConvPlan> conv = ir::plan_convolution(s.compute);
        convolutions && conv && library_convolution(*conv)) {
      s.annotations.conv = std::make_shared<const ir::ConvPlan>(std::move(*conv));
      continue;
    }
    std::optional<GemmPlan> plan = plan_contraction(s.compute);
    if (!plan) continue;
    const std::optional<int64_t> work = minimum_work(*plan);
    if (work && *work < kGemmMinWork && plan->work.is_constant()) continue;
    if (!work || *work < kGemmMinWork) plan->per_call_min_work = kGemmMinWork;
    s.annotations.gemm = std::make_shared<const GemmPlan>(std::move(*plan));
  }
}

}  // namespace

void contraction(ir::Function& fn) {
  annotate(fn.body, true);
}

void contraction_without_convolutions(ir::Function& fn) {
  annotate(fn.body, false);
}

}  // namespace tenet::passes
