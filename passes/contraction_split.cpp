// The split of a strided gather (the input gradient of a strided
// convolution) into a GEMM into columns and a guarded gather (col2im).
#include "passes/contraction_split.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/builder.h"

namespace tenet::passes::detail {

namespace {

bool mentions(const std::vector<ir::Affine>& indices, const std::string& index) {
  for (const ir::Affine& a : indices)
    if (a.coef(index) != 0) return true;
  return false;
}

/// `dims` sorted by the storage position of the first dimension of `tensor`
/// (read at `indices`) that mentions each.
void sort_by_storage(std::vector<ir::Dim>& dims, const ir::Value& tensor,
                     const std::vector<ir::Affine>& indices) {
  std::vector<int> pos(size_t(tensor.rank()));
  for (int d = 0; d < tensor.rank(); ++d) pos[size_t(d)] = d;
  for (size_t p = 0; p < tensor.layout.size(); ++p) pos[size_t(tensor.layout[p])] = int(p);
  auto first = [&](const ir::Dim& d) {
    int best = tensor.rank();
    for (size_t i = 0; i < indices.size(); ++i)
      if (indices[i].coef(d.index) != 0) best = std::min(best, pos[i]);
    return best;
  };
  std::stable_sort(dims.begin(), dims.end(),
                   [&](const ir::Dim& x, const ir::Dim& y) { return first(x) < first(y); });
}

/// Whether `a` provably stays in [0, extent) over `ranges` (a constant, or
/// a plain index whose range fits).
bool provably_in_range(const ir::Affine& a, const std::map<std::string, ir::Dim>& ranges,
                       const ir::SizeExpr& extent) {
  if (a.terms.empty()) return ir::provably_le(0, a.offset) && ir::provably_le(a.offset + 1, extent);
  if (!a.is_plain_var()) return false;
  const ir::Dim& d = ranges.at(a.terms[0].first);
  return ir::provably_le(0, d.lo) && ir::provably_le(d.hi, extent);
}

/// Whether the product of `a` is provably at most the product of `b`: equal
/// factors cancel, and what remains must be constant.
bool product_provably_le(std::vector<ir::SizeExpr> a, std::vector<ir::SizeExpr> b) {
  for (auto it = a.begin(); it != a.end();) {
    auto same = std::find(b.begin(), b.end(), *it);
    if (same != b.end()) {
      b.erase(same);
      it = a.erase(it);
    } else {
      ++it;
    }
  }
  auto product = [](const std::vector<ir::SizeExpr>& factors) -> std::optional<int64_t> {
    int64_t p = 1;
    for (const ir::SizeExpr& f : factors) {
      std::optional<int64_t> k = f.constant();
      if (!k || *k < 0) return std::nullopt;
      p *= *k;
    }
    return p;
  };
  std::optional<int64_t> pa = product(a), pb = product(b);
  return pa && pb && *pa <= *pb;
}

/// The extent a size parameter is taken to have when sizes are weighed: the
/// sizes a convolution's work hinges on, an image's height and width, are the
/// parameters; kernels are constants.
constexpr int64_t kTypicalExtent = 32;

/// The product of `factors` with each size parameter at kTypicalExtent.
double typical_product(const std::vector<ir::SizeExpr>& factors) {
  ir::SizeBindings typical;
  for (const ir::SizeExpr& f : factors)
    for (const std::string& symbol : f.symbols()) typical[symbol] = kTypicalExtent;
  double p = 1;
  for (const ir::SizeExpr& f : factors) p *= double(f.eval(typical));
  return p;
}

/// Whether the product of `a` is at most the product of `b` once equal
/// factors cancel, with each size parameter in what remains taken as
/// kTypicalExtent.
bool does_no_more_work(const std::vector<ir::SizeExpr>& a, const std::vector<ir::SizeExpr>& b) {
  return product_provably_le(a, b) || typical_product(a) <= typical_product(b);
}

/// The window of a gather: the dimensions of the guarded factor `f` whose index
/// mixes out and reduce indices, and the indices they mix.
struct Window {
  std::vector<int> mixed;
  std::set<std::string> mixed_out, mixed_reduce;
  bool strided = false;  // a reduce index of the window steps by 2 or more
  bool has(size_t d) const { return std::find(mixed.begin(), mixed.end(), int(d)) != mixed.end(); }
};

/// f's window, or none when f has no mixed dimension or the mixed out indices
/// would not vanish from the product (they are read elsewhere too).
std::optional<Window> find_window(const ir::ExprNode& f, const ir::ExprNode& g,
                                  const std::set<std::string>& out_names,
                                  const std::map<std::string, ir::Dim>& ranges) {
  Window w;
  for (size_t d = 0; d < f.indices.size(); ++d) {
    bool has_out = false, has_reduce = false;
    for (const auto& [index, coef] : f.indices[d].terms)
      (out_names.count(index) ? has_out : has_reduce) = true;
    if (!has_out || !has_reduce) continue;
    w.mixed.push_back(int(d));
    for (const auto& [index, coef] : f.indices[d].terms) {
      (out_names.count(index) ? w.mixed_out : w.mixed_reduce).insert(index);
      w.strided = w.strided || (!out_names.count(index) && (coef >= 2 || coef <= -2));
    }
  }
  // A stride-1 gather (the input gradient of an unstrided convolution,
  // d_x(b, c, h, w) +=! d_y?(b, o, h - kh, w - kw) * w(o, c, kh, kw)) is a
  // GEMM as it is, with f packed: one row per (b, h, w), one column per
  // (o, kh, kw), the zeros outside d_y included. The split is worth it when
  // its columns are no larger than that packed matrix (split_pays); a strided
  // one always is.
  if (w.mixed.empty()) return std::nullopt;
  // The mixed out indices must vanish from the product: read nowhere else.
  for (const std::string& index : w.mixed_out) {
    if (mentions(g.indices, index)) return std::nullopt;
    for (size_t d = 0; d < f.indices.size(); ++d)
      if (!w.has(d) && f.indices[d].coef(index) != 0) return std::nullopt;
  }
  for (const std::string& index : w.mixed_reduce)
    if (ranges.at(index).lo != ir::SizeExpr(0)) return std::nullopt;
  return w;
}

/// kappa: one fresh index per mixed dimension of f, over the whole dimension.
struct Kappas {
  std::vector<ir::Affine> f_indices;  // f's indices, each mixed one replaced by its kappa
  std::vector<ir::Dim> dims;
  std::map<std::string, int> dim_of;  // kappa -> the dimension of f it stands for
  bool unguarded = true;              // f's other indices provably stay in range
};

/// Names a kappa for each dimension of f's window (after its out index).
Kappas make_kappas(const ir::ExprNode& f, const Window& w, const std::set<std::string>& out_names,
                   const std::map<std::string, ir::Dim>& ranges) {
  std::set<std::string> taken;
  for (const auto& [index, d] : ranges) taken.insert(index);
  Kappas k;
  k.f_indices = f.indices;
  for (size_t d = 0; d < f.indices.size(); ++d) {
    if (!w.has(d)) {
      k.unguarded = k.unguarded && provably_in_range(f.indices[d], ranges, f.tensor->shape[d]);
      continue;
    }
    std::string name = "k_" + f.indices[d].terms[0].first;
    for (const auto& [index, coef] : f.indices[d].terms)
      if (out_names.count(index)) name = "k_" + index;
    for (int n = 1; taken.count(name); ++n) name += std::to_string(n);
    taken.insert(name);
    k.dims.push_back({name, 0, f.tensor->shape[d]});
    k.dim_of[name] = int(d);
    k.f_indices[d] = ir::Affine::var(name);
  }
  return k;
}

/// The dimensions of the columns, in order: the batch, then the indices read by
/// both factors, by g only, by f only (each sorted by its tensor's storage).
std::vector<ir::Dim> column_dims(const ir::Compute& c, const ir::ExprNode& f, const ir::ExprNode& g,
                                 const Window& w, const Kappas& k) {
  std::vector<ir::Dim> candidates;
  for (const ir::Dim& d : c.out)
    if (!w.mixed_out.count(d.index)) candidates.push_back(d);
  for (const ir::Dim& d : c.reduce)
    if (w.mixed_reduce.count(d.index)) candidates.push_back(d);
  candidates.insert(candidates.end(), k.dims.begin(), k.dims.end());
  std::vector<ir::Dim> both, g_only, f_only;
  for (const ir::Dim& d : candidates) {
    const bool in_g = mentions(g.indices, d.index), in_f = mentions(k.f_indices, d.index);
    (in_g && in_f ? both : in_g ? g_only : f_only).push_back(d);
  }
  sort_by_storage(g_only, *g.tensor, g.indices);
  sort_by_storage(f_only, *f.tensor, k.f_indices);
  // The result's outermost dimension (the batch of NCHW) comes first
  // wherever it is read, so that the GEMM loops over it with every matrix
  // in place (dy's rows for one image are its channels); the guarded dims
  // (kappa) stay innermost, where the gather adds unit-stride windows.
  std::vector<ir::Dim> cols_dims;
  const int outermost = c.result->layout.empty() ? 0 : c.result->layout[0];
  if (size_t(outermost) < c.out.size()) {
    auto batch = std::find_if(f_only.begin(), f_only.end(), [&](const ir::Dim& d) {
      return d.index == c.out[size_t(outermost)].index;
    });
    if (batch != f_only.end()) {
      cols_dims.push_back(*batch);
      f_only.erase(batch);
    }
  }
  cols_dims.insert(cols_dims.end(), both.begin(), both.end());
  cols_dims.insert(cols_dims.end(), g_only.begin(), g_only.end());
  cols_dims.insert(cols_dims.end(), f_only.begin(), f_only.end());
  return cols_dims;
}

/// Whether an unstrided split's GEMM, though it does more multiply-adds than
/// the statement, costs less once the statement's packing is counted: the
/// statement as one GEMM first copies f through its window into a packed
/// matrix (`packed`: one row per value of the reduce indices, one column per
/// out index f reads), which the GEMM then reads again; the split writes its
/// columns once and its gather reads them once. One packed element costs
/// about kPackedElementCost multiply-adds (a gather and a store, then a load
/// by the GEMM, against the GEMM's vector multiply-adds on data in cache).
/// ResNet-18's last stage at 64x64 (2x2 pixels, 3x3 kernels): the statement
/// packs its 512x512x3x3 weight into a 2048 x 2048 matrix for a 2-row GEMM;
/// the split multiplies the weight as stored into 36,864 columns.
bool packing_outweighs(const std::vector<ir::SizeExpr>& packed,
                       const std::vector<ir::SizeExpr>& columns,
                       const std::vector<ir::SizeExpr>& split_work,
                       const std::vector<ir::SizeExpr>& direct_work) {
  constexpr double kPackedElementCost = 16;
  const double direct = typical_product(direct_work) + kPackedElementCost * typical_product(packed);
  const double split =
      typical_product(split_work) + 2 * kPackedElementCost * typical_product(columns);
  return split < direct;
}

/// Whether splitting `c` into columns `cols_dims` costs no more memory (when
/// unstrided) and no more multiply-adds than the statement as it is, or
/// (unstrided) less once the statement's packing is counted.
bool split_pays(const ir::Compute& c, const ir::ExprNode& f, const Window& w,
                const std::vector<ir::Dim>& cols_dims) {
  std::vector<ir::SizeExpr> packed, columns;
  if (!w.strided) {
    for (const ir::Dim& d : c.out)
      if (mentions(f.indices, d.index)) packed.push_back(d.extent());
    for (const ir::Dim& d : c.reduce) packed.push_back(d.extent());
    for (const ir::Dim& d : cols_dims) columns.push_back(d.extent());
    if (!product_provably_le(columns, packed)) return false;
  }
  // The split's GEMM multiplies every column by every value of the other
  // reduce indices; it must not do more multiply-adds than the statement
  // itself. The input gradient of a strided convolution does fewer (the
  // kernel's window instead of the image's); its weight gradient,
  // dw(o, c, kh, kw) +=! dy(b, o, i, j) * x?(b, c, 2*i + kh, 2*j + kw), would
  // do far more (the image instead of the window) and stays one GEMM over
  // im2col columns of x.
  std::vector<ir::SizeExpr> split_work, direct_work;
  for (const ir::Dim& d : cols_dims) split_work.push_back(d.extent());
  for (const ir::Dim& d : c.reduce)
    if (!w.mixed_reduce.count(d.index)) split_work.push_back(d.extent());
  for (const ir::Dim& d : c.out) direct_work.push_back(d.extent());
  for (const ir::Dim& d : c.reduce) direct_work.push_back(d.extent());
  return does_no_more_work(split_work, direct_work) ||
         (!w.strided && packing_outweighs(packed, columns, split_work, direct_work));
}

/// The split itself: the GEMM of the product into the columns, then the guarded
/// gather of the columns into c's result; none when the GEMM has no reduce index.
std::optional<ir::SplitGather> build_split(const ir::Compute& c, int f_at, const ir::ExprNode& f,
                                           const Window& w, const Kappas& k,
                                           const std::vector<ir::Dim>& cols_dims) {
  std::vector<ir::SizeExpr> cols_shape;
  for (const ir::Dim& d : cols_dims) cols_shape.push_back(d.extent());
  const ir::ValuePtr cols =
      ir::make_value(-1, c.result->name + "_cols", c.result->type, std::move(cols_shape));

  ir::SplitGather split;
  split.product.result = cols;
  split.product.out = cols_dims;
  for (const ir::Dim& d : c.reduce)
    if (!w.mixed_reduce.count(d.index)) split.product.reduce.push_back(d);
  if (split.product.reduce.empty()) return std::nullopt;
  split.product.op = ir::ReduceOp::Sum;
  const ir::Expr f_read = ir::make_read(f.tensor, k.f_indices, !k.unguarded);
  const ir::ExprNode& body = *c.body;
  split.product.body = f_at == 0 ? ir::make_binary(ir::BinOp::Mul, f_read, body.args[1])
                                 : ir::make_binary(ir::BinOp::Mul, body.args[0], f_read);

  std::vector<ir::Affine> at;
  for (const ir::Dim& d : cols_dims) {
    auto kappa = k.dim_of.find(d.index);
    at.push_back(kappa == k.dim_of.end() ? ir::Affine::var(d.index)
                                         : f.indices[size_t(kappa->second)]);
  }
  split.gather.result = c.result;
  split.gather.out = c.out;
  for (const ir::Dim& d : c.reduce)
    if (w.mixed_reduce.count(d.index)) split.gather.reduce.push_back(d);
  split.gather.op = ir::ReduceOp::Sum;
  split.gather.init = c.init;
  split.gather.body = ir::make_read(cols, at, true);
  return split;
}

}  // namespace

std::optional<ir::SplitGather> split_gather(const ir::Compute& c) {
  if (c.op != ir::ReduceOp::Sum || c.reduce.empty()) return std::nullopt;
  const ir::ExprNode& body = *c.body;
  if (body.kind != ir::ExprKind::Binary || body.binop != ir::BinOp::Mul) return std::nullopt;
  for (const ir::Expr& arg : body.args)
    if (arg->kind != ir::ExprKind::Read || arg->tensor->type != c.result->type ||
        arg->has_computed_index())
      return std::nullopt;
  std::map<std::string, ir::Dim> ranges;
  std::set<std::string> out_names;
  for (const ir::Dim& d : c.out) ranges[d.index] = d, out_names.insert(d.index);
  for (const ir::Dim& d : c.reduce) ranges[d.index] = d;

  // Either factor may be the guarded one read through the window (f).
  for (int f_at : {0, 1}) {
    const ir::ExprNode& f = *body.args[size_t(f_at)];
    const ir::ExprNode& g = *body.args[size_t(1 - f_at)];
    if (!f.guarded) continue;
    const std::optional<Window> w = find_window(f, g, out_names, ranges);
    if (!w) continue;
    const Kappas k = make_kappas(f, *w, out_names, ranges);
    const std::vector<ir::Dim> cols_dims = column_dims(c, f, g, *w, k);
    if (!split_pays(c, f, *w, cols_dims)) continue;
    return build_split(c, f_at, f, *w, k, cols_dims);
  }
  return std::nullopt;
}

}  // namespace tenet::passes::detail
