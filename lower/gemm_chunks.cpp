#include "lower/gemm_chunks.h"

#include <map>
#include <memory>

#include "ir/builder.h"
#include "ir/mutator.h"
#include "support/error.h"

namespace tenet::lower {

namespace {

/// Per tensor, in order of appearance: the dimension `index` is read in (-1:
/// not read); not viewable once some access reads it otherwise.
class IndexDims {
 public:
  explicit IndexDims(std::string index) : index_(std::move(index)) {}

  void note(const ir::ValuePtr& tensor, const std::vector<ir::Affine>& indices) {
    int dim = -1, uses = 0;
    for (size_t d = 0; d < indices.size(); ++d) {
      if (indices[d].coef(index_) == 0) continue;
      ++uses;
      if (indices[d].is_plain_var()) dim = int(d);
    }
    if (uses > 1 || (uses == 1 && dim < 0)) viewable_ = false;
    for (const auto& [seen, seen_dim] : dims_)
      if (seen == tensor) {
        viewable_ = viewable_ && seen_dim == dim;
        return;
      }
    dims_.push_back({tensor, dim});
  }

  bool viewable() const { return viewable_; }
  const std::vector<std::pair<ir::ValuePtr, int>>& dims() const { return dims_; }

 private:
  std::string index_;
  bool viewable_ = true;
  std::vector<std::pair<ir::ValuePtr, int>> dims_;
};

}  // namespace

std::optional<GemmChunk> chunk_statement(const ir::Stmt& s, const std::string& index,
                                         const std::string& len) {
  const ir::Compute& c = s.compute;
  std::vector<ir::Affine> position;
  size_t out_at = c.out.size();
  for (size_t d = 0; d < c.out.size(); ++d) {
    position.push_back(ir::Affine::var(c.out[d].index));
    if (c.out[d].index == index) out_at = d;
  }
  TENET_ASSERT(out_at < c.out.size(), index << " is no out index of " << c.result->name);
  if (c.out[out_at].lo != ir::SizeExpr(0)) return std::nullopt;

  IndexDims dims(index);
  dims.note(c.result, position);
  if (c.init) dims.note(c.init, position);
  for (const ir::Expr& read : ir::reads_of(c.body)) dims.note(read->tensor, read->indices);
  if (!dims.viewable()) return std::nullopt;

  GemmChunk chunk;
  chunk.index = c.out[out_at];
  chunk.len = len;
  std::map<const ir::Value*, ir::ValuePtr> view_of;
  for (const auto& [tensor, dim] : dims.dims()) {
    if (dim < 0) continue;
    std::vector<ir::SizeExpr> shape = tensor->shape;
    shape[size_t(dim)] = ir::SizeExpr::sym(len);
    ir::ValuePtr view = ir::with_shape(tensor, std::move(shape));
    view_of[tensor.get()] = view;
    chunk.views.push_back({view, tensor, dim});
  }
  chunk.statement = s;
  ir::Compute& chunked = chunk.statement.compute;
  chunked.result = view_of.at(c.result.get());
  if (c.init) chunked.init = view_of.at(c.init.get());
  chunked.out[out_at].hi = ir::SizeExpr::sym(len);
  chunked.body = ir::replace_tensors(c.body, view_of);
  return chunk;
}

bool keeps_matrices_dense(const ir::GemmPlan& p, const std::string& index) {
  auto outermost_or_absent = [&](const std::vector<ir::Dim>& group) {
    for (size_t i = 0; i < group.size(); ++i)
      if (group[i].index == index) return i == 0;
    return true;
  };
  return outermost_or_absent(p.m) && outermost_or_absent(p.n);
}

}  // namespace tenet::lower
