// Row-local temporaries (lower/row_local.h): a row of the tensor as an
// array declared inside the nest's shared loops, indexed with stride 0 along
// them.
#include <algorithm>
#include <string>
#include <vector>

#include "codegen/function_emitter.h"

namespace tenet::codegen::detail {

void FunctionEmitter::add_row_local(const ir::ValuePtr& v, const std::string& pointer,
                                    const lower::RowLocal& row) {
  // Declared inside the shared loops (declare_rows): the dimensions they run
  // along have stride 0, the others are a row-major row of constant extents.
  TensorAccess t;
  t.pointer = pointer;
  t.strides.assign(v->shape.size(), "0");
  for (int d = 0; d < v->rank(); ++d) t.dims.push_back(dim_text(*v, d));
  int64_t stride = 1;
  for (size_t d = v->shape.size(); d-- > 0;) {
    if (std::find(row.shared_dims.begin(), row.shared_dims.end(), d) != row.shared_dims.end())
      continue;
    t.strides[d] = std::to_string(stride);
    stride *= *v->shape[d].constant();
  }
  tensors_[v.get()] = std::move(t);
}

void FunctionEmitter::declare_rows(Code& code, const std::vector<Scheduled>& nest, size_t first,
                                   size_t end, size_t depth) {
  std::vector<std::string> names, lines;
  for (size_t k = first; k < end; ++k) {
    const ir::ValuePtr& result = nest[k].stmt->compute.result;
    auto row = memory_.row_local.find(result.get());
    if (row == memory_.row_local.end() || row->second.depth != depth) continue;
    names.push_back(result->name);
    lines.push_back("alignas(64) " + std::string(c_type_name(result->type)) + " " +
                    access(result).pointer + "[" + std::to_string(row->second.elements) + "];");
  }
  if (names.empty()) return;
  std::string list;
  for (size_t k = 0; k < names.size(); ++k)
    list += (k == 0 ? "" : k + 1 == names.size() ? " and " : ", ") + names[k];
  code.note(list +
            ", a row at a time: computed and read only at this iteration of the loops "
            "around (lower/row_local.h).");
  for (const std::string& line : lines) code.line(line);
}

}  // namespace tenet::codegen::detail
