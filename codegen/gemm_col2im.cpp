// The gather of a split statement (col2im, passes/contraction_split.h) as a
// scatter of contiguous runs: FunctionEmitter::emit_col2im.
//
// The split's gather reads its columns through a guard,
//
//     dx(b, c, h, w) +=! cols?(b, i, j, c, h - 2*i, w - 2*j)      (sum over i, j)
//
// and as a loop nest it spends most of its time on index arithmetic and on
// a strided read per element. Each (i, j) adds a dense window of the columns
// to a window of dx, so this emits, per value of the out indices that the
// columns read plainly (b, c), dx = init (or 0) followed by, for each (i, j)
// in the gather's order, the window added row by row, both sides unit-stride
// in the innermost index, with the window's bounds computed once per (i, j):
//
//     for (i) for (j) for (k_h in window) for (k_w in window)
//       dx(b, c, k_h + 2*i, k_w + 2*j) += cols(b, i, j, c, k_h, k_w)
//
// Each element of dx still receives its terms one at a time in the gather's
// order (i, j ascending: the window index determines the element), so the
// sum is the loop nest's, bit for bit, and it does not depend on the number
// of threads (threads split b and c only). Gathers of another form (an out
// index with a coefficient other than 1, or in two guarded dimensions; a
// range not starting at 0) keep the loop nest.
#include <algorithm>
#include <optional>

#include "codegen/function_emitter.h"
#include "ir/affine.h"

namespace tenet::codegen::detail {

namespace {

/// A guarded dimension of the columns: index `window` (fresh) runs over the
/// dimension, and writes the result's out index `out` at window - `shift`
/// (the rest of the read's affine index: reduce indices and a constant).
struct WindowDim {
  int cols_dim = 0;
  std::string out;
  ir::Affine shift;
};

/// The scatter form of a split's gather, or nullopt when it has none.
struct ScatterForm {
  std::vector<ir::Dim> free;       // out indices read plainly, in the result's order
  std::vector<WindowDim> windows;  // in the result's storage order of their out index
};

int storage_position(const ir::Value& v, int dim) {
  for (size_t p = 0; p < v.layout.size(); ++p)
    if (v.layout[p] == dim) return int(p);
  return dim;
}

std::optional<ScatterForm> scatter_form(const ir::Compute& gather) {
  if (gather.op != ir::ReduceOp::Sum || gather.body->kind != ir::ExprKind::Read)
    return std::nullopt;
  for (const auto* dims : {&gather.out, &gather.reduce})
    for (const ir::Dim& d : *dims)
      if (d.lo != ir::SizeExpr(0)) return std::nullopt;
  auto is_out = [&](const std::string& index) {
    return std::any_of(gather.out.begin(), gather.out.end(),
                       [&](const ir::Dim& d) { return d.index == index; });
  };
  const ir::ExprNode& read = *gather.body;
  ScatterForm form;
  std::vector<std::string> windowed;
  for (size_t d = 0; d < read.indices.size(); ++d) {
    const ir::Affine& a = read.indices[d];
    if (a.is_plain_var()) continue;
    WindowDim w;
    w.cols_dim = int(d);
    w.shift.offset = a.offset;
    for (const auto& [index, coef] : a.terms) {
      if (!is_out(index)) {
        w.shift.terms.push_back({index, coef});
        continue;
      }
      if (coef != 1 || !w.out.empty()) return std::nullopt;
      w.out = index;
    }
    if (w.out.empty() || std::count(windowed.begin(), windowed.end(), w.out)) return std::nullopt;
    windowed.push_back(w.out);
    form.windows.push_back(std::move(w));
  }
  if (form.windows.empty()) return std::nullopt;
  for (size_t d = 0; d < read.indices.size(); ++d)
    if (read.indices[d].is_plain_var() &&
        std::count(windowed.begin(), windowed.end(), read.indices[d].terms[0].first))
      return std::nullopt;
  for (const ir::Dim& d : gather.out)
    if (!std::count(windowed.begin(), windowed.end(), d.index)) form.free.push_back(d);
  auto result_dim = [&](const WindowDim& w) {
    for (size_t d = 0; d < gather.out.size(); ++d)
      if (gather.out[d].index == w.out) return int(d);
    return -1;
  };
  std::stable_sort(form.windows.begin(), form.windows.end(),
                   [&](const WindowDim& x, const WindowDim& y) {
                     return storage_position(*gather.result, result_dim(x)) <
                            storage_position(*gather.result, result_dim(y));
                   });
  return form;
}

}  // namespace

bool FunctionEmitter::emit_col2im(Code& code, const ir::Stmt& s, const Scope& scope) {
  const ir::Compute& c = s.compute;
  std::optional<ScatterForm> form = scatter_form(c);
  if (!form) return false;
  const ir::ExprNode& read = *c.body;
  const TensorAccess& result = access(c.result);
  const ElemType type = c.result->type;

  Namer local = statement_namer(c, scope);
  Scope inner = scope;
  auto bind = [&](const ir::Dim& d) {
    inner.indices[d.index] = IndexInfo{local.take(d.index), d.lo, d.hi};
    return inner.indices[d.index].name;
  };
  code.comment(comment_text(s));
  code.note("As a scatter: per " +
            [&] {
              std::string names;
              for (const ir::Dim& d : form->free) names += (names.empty() ? "" : ", ") + d.index;
              return names.empty() ? std::string("call") : names;
            }() +
            ", the result starts from " + (c.init ? c.init->name : std::string("0")) +
            " and each term adds a window of " + read.tensor->name +
            ", in the order of the sum, so every element sums its terms in that order.");

  // The free loops, parallel: each thread owns whole (free) slices of the result.
  std::vector<ir::Dim> all = c.out;
  all.insert(all.end(), c.reduce.begin(), c.reduce.end());
  const std::string work = product_text(all, size_names_);
  if (options_.openmp && !form->free.empty()) {
    const std::string collapse =
        form->free.size() > 1 ? " collapse(" + std::to_string(form->free.size()) + ")" : "";
    code.line("#pragma omp parallel for" + collapse + " if (" + work +
              " >= " + std::to_string(options_.parallel_min_work) + ")");
  }
  for (const ir::Dim& d : form->free) {
    const std::string v = bind(d);
    code.open("for (int64_t " + v + " = 0; " + v + " < " + product_text({d}, size_names_) + "; ++" +
              v + ")");
  }

  // The result's slice starts from the init, or from 0.
  std::vector<ir::Dim> window_out;
  for (const WindowDim& w : form->windows)
    for (const ir::Dim& d : c.out)
      if (d.index == w.out) window_out.push_back(d);
  {
    Scope fill = inner;
    Namer fill_names = local;
    for (const ir::Dim& d : window_out) {
      const std::string v = fill_names.take(d.index);
      fill.indices[d.index] = IndexInfo{v, d.lo, d.hi};
      code.open("for (int64_t " + v + " = 0; " + v + " < " + product_text({d}, size_names_) +
                "; ++" + v + ")");
    }
    const std::vector<ir::Affine> position = ir::plain_indices(c.out);
    const std::string start =
        c.init ? access(c.init).pointer + "[" + flat_offset(access(c.init), position, fill) + "]"
               : literal(0, type).text;
    code.line(result.pointer + "[" + flat_offset(result, position, fill) + "] = " + start + ";");
    for (size_t i = 0; i < window_out.size(); ++i) code.close();
  }

  // The terms, in the gather's order; per term, each window's bounds once.
  for (const ir::Dim& d : c.reduce) {
    const std::string v = bind(d);
    code.open("for (int64_t " + v + " = 0; " + v + " < " + product_text({d}, size_names_) + "; ++" +
              v + ")");
  }
  std::vector<ir::Affine> cols_at = read.indices, result_at = ir::plain_indices(c.out);
  std::vector<std::pair<std::string, std::string>> bounds;  // per window: lo, hi names
  for (size_t i = 0; i < form->windows.size(); ++i) {
    const WindowDim& w = form->windows[i];
    // window = out + shift, 0 <= window < the columns' extent, 0 <= out < the out extent.
    const std::string lo = local.take("k_" + w.out + "_lo"), hi = local.take("k_" + w.out + "_hi");
    const CExpr back = affine_to_c(-w.shift, inner);
    code.line("const int64_t " + lo + " = std::max<int64_t>(0, " +
              affine_to_c(w.shift, inner).text + "), " + hi + " = std::min<int64_t>(" +
              access(read.tensor).dims[size_t(w.cols_dim)] + ", " +
              product_text({window_out[i]}, size_names_) + " - " + wrap(back, kPrecMultiplicative) +
              ");");
    bounds.push_back({lo, hi});
  }
  for (size_t i = 0; i < form->windows.size(); ++i) {
    const WindowDim& w = form->windows[i];
    const std::string key = "window of " + w.out;  // a space: no IR index has this name
    const std::string v = local.take("k_" + w.out);
    inner.indices[key] = IndexInfo{v, 0, 0};
    code.open("for (int64_t " + v + " = " + bounds[i].first + "; " + v + " < " + bounds[i].second +
              "; ++" + v + ")");
    cols_at[size_t(w.cols_dim)] = ir::Affine::var(key);
    for (size_t d = 0; d < c.out.size(); ++d)
      if (c.out[d].index == w.out) result_at[d] = ir::Affine::var(key) - w.shift;
  }
  code.line(result.pointer + "[" + flat_offset(result, result_at, inner) +
            "] += " + access(read.tensor).pointer + "[" +
            flat_offset(access(read.tensor), cols_at, inner) + "];");
  for (size_t i = 0; i < form->windows.size() + c.reduce.size() + form->free.size(); ++i)
    code.close();
  return true;
}

}  // namespace tenet::codegen::detail
