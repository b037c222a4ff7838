#include "lower/col2im.h"

#include <algorithm>

namespace tenet::lower {

namespace {

int storage_position(const ir::Value& v, int dim) {
  for (size_t p = 0; p < v.layout.size(); ++p)
    if (v.layout[p] == dim) return int(p);
  return dim;
}

}  // namespace

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

}  // namespace tenet::lower
