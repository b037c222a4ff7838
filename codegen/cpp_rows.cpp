// Row-local temporaries (lower/row_local.h): a row of the tensor as an
// array the loop tree declares inside the nest's shared loops, indexed with
// stride 0 along them.
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

}  // namespace tenet::codegen::detail
