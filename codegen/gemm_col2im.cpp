// The gather of a split statement (col2im) as a scatter of contiguous runs,
// in the form lower/col2im.h found: FunctionEmitter::emit_col2im.
#include <algorithm>
#include <optional>

#include "codegen/function_emitter.h"
#include "ir/affine.h"

namespace tenet::codegen::detail {

void FunctionEmitter::emit_col2im(Code& code, const ir::Stmt& s, const lower::ScatterForm& scatter,
                                  const Scope& scope) {
  const ir::Compute& c = s.compute;
  const lower::ScatterForm* form = &scatter;
  const ir::ExprNode& read = *c.body;
  const TensorAccess& result = access(c.result);
  const ElemType type = c.result->type;

  Namer local = statement_namer(c, scope);
  Scope inner = scope;
  auto bind = [&](const ir::Dim& d) {
    inner.bind(d.index, local.take(d.index), d.lo, d.hi);
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
  for (const lower::WindowDim& w : form->windows)
    for (const ir::Dim& d : c.out)
      if (d.index == w.out) window_out.push_back(d);
  {
    Scope fill = inner;
    Namer fill_names = local;
    for (const ir::Dim& d : window_out) {
      const std::string v = fill_names.take(d.index);
      fill.bind(d.index, v, d.lo, d.hi);
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
    const lower::WindowDim& w = form->windows[i];
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
    const lower::WindowDim& w = form->windows[i];
    const std::string key = "window of " + w.out;  // a space: no IR index has this name
    const std::string v = local.take("k_" + w.out);
    inner.bind(key, v, 0, 0);
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
}

}  // namespace tenet::codegen::detail
