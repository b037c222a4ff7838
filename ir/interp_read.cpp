// Tensor reads for the interpreter's lane nodes (see interp_expr.h): bounds checked once
// per box, lane by lane only near a border.

#include <algorithm>

#include "ir/affine.h"
#include "ir/interp_expr.h"
#include "ir/printer.h"
#include "runtime/tenet_index.h"
#include "support/error.h"

namespace tenet::ir::interp {

namespace {

/// A read with affine indices. Each index splits into a part that varies over
/// the lanes (fixed for the whole statement) and a scalar part for the current
/// outer point, so the bounds check of a whole box costs O(rank); only boxes
/// that touch the border check lane by lane.
template <typename S>
class ReadNode final : public LaneNode<lane_of<S>>, public DirectRead<S> {
 public:
  ReadNode(const ExprNode& e, const Tensor& src, const Domain& domain, const SizeBindings& sizes)
      : LaneNode<lane_of<S>>(domain.lanes), expr_(e), dom_(domain), data_(src.data<S>()) {
    const size_t lanes = size_t(domain.lanes);
    axes_.resize(e.indices.size());
    int64_t stride = 1;
    for (size_t d = axes_.size(); d-- > 0;) {
      axes_[d].extent = src.shape()[d];
      axes_[d].stride = stride;
      stride *= axes_[d].extent;
    }
    offsets_.assign(lanes, 0);
    flat_.resize(lanes);
    ok_.resize(lanes);
    for (size_t d = 0; d < axes_.size(); ++d) {
      Axis& axis = axes_[d];
      axis.constant = e.indices[d].offset.eval(sizes);
      for (const auto& [name, coef] : e.indices[d].terms) {
        int k = domain.find(name);
        if (k < 0) {
          axis.constant += coef * loop_var(name);
          continue;
        }
        const Domain::Index& ix = domain.indices[size_t(k)];
        axis.constant += coef * ix.lo;
        if (ix.outer) axis.outer_terms.push_back({k, coef});
        if (!ix.in_box) continue;
        if (axis.lane_part.empty()) axis.lane_part.assign(lanes, 0);
        for (size_t l = 0; l < lanes; ++l) axis.lane_part[l] += coef * ix.lane_pos[l];
      }
      if (!axis.lane_part.empty()) {
        auto [lo, hi] = std::minmax_element(axis.lane_part.begin(), axis.lane_part.end());
        axis.full = {*lo, *hi};
        auto tail_end = axis.lane_part.begin() + domain.tail_lanes;
        auto [tail_lo, tail_hi] = std::minmax_element(axis.lane_part.begin(), tail_end);
        axis.tail = {*tail_lo, *tail_hi};
        for (size_t l = 0; l < lanes; ++l) offsets_[l] += axis.stride * axis.lane_part[l];
      }
    }
    bool uniform = true, contiguous = true;
    for (size_t l = 0; l < lanes; ++l) {
      uniform = uniform && offsets_[l] == 0;
      contiguous = contiguous && offsets_[l] == int64_t(l);
    }
    pattern_ = uniform ? Pattern::Uniform : contiguous ? Pattern::Contiguous : Pattern::Gather;
  }

  void eval(int n, const uint8_t* mask) override {
    if (!locate_outer_point(n)) return eval_near_border(n, mask);
    const S* data = data_;
    const int64_t* offsets = offsets_.data();
    const int64_t base = base_;
    lane_of<S>* out = this->values();
    switch (pattern_) {
      case Pattern::Uniform:
        std::fill_n(out, n, lane_of<S>(data[base]));
        break;
      case Pattern::Contiguous:
        for (int l = 0; l < n; ++l) out[l] = lane_of<S>(data[base + l]);
        break;
      case Pattern::Gather:
        for (int l = 0; l < n; ++l) out[l] = lane_of<S>(data[base + offsets[l]]);
        break;
    }
  }

  bool locate(int n, const S*& data, int64_t& base, const int64_t*& offsets) override {
    bool inside = locate_outer_point(n);
    data = data_;
    base = base_;
    offsets = offsets_.data();
    return inside;
  }

 private:
  struct Axis {
    int64_t extent = 0;
    int64_t stride = 0;
    int64_t constant = 0;                              // offset, lo terms, loop variables
    std::vector<std::pair<int, int64_t>> outer_terms;  // (domain index, coefficient)
    std::vector<int64_t> lane_part;                    // empty when no box index occurs
    /// Range of lane_part over a full box and over the shorter last chunk.
    std::pair<int64_t, int64_t> full{0, 0}, tail{0, 0};
    int64_t scalar = 0;  // the outer part at the current point
  };
  enum class Pattern { Uniform, Contiguous, Gather };

  /// Computes each index's scalar part at the current outer point; true when
  /// lanes [0, n) are all in bounds.
  bool locate_outer_point(int n) {
    int64_t base = 0;
    bool inside = true;
    const bool tail = n < dom_.lanes;
    for (Axis& axis : axes_) {
      int64_t s = axis.constant;
      for (const auto& [k, coef] : axis.outer_terms) s += coef * dom_.outer_pos[size_t(k)];
      axis.scalar = s;
      auto [lo, hi] = tail ? axis.tail : axis.full;
      inside = inside && s + lo >= 0 && s + hi < axis.extent;
      base += s * axis.stride;
    }
    base_ = base;
    return inside;
  }

  int64_t loop_var(const std::string& name) const {
    for (const auto& [var, value] : dom_.loop_vars)
      if (var == name) return value;
    TENET_UNREACHABLE("interpreter: index " + name + " is neither in the domain of " +
                      dom_.statement + " nor a loop variable");
  }

  /// Lanes out of bounds read 0 (guarded) or fail (unguarded, unless masked
  /// off). Axis by axis, so that the inner loops stay simple.
  void eval_near_border(int n, const uint8_t* mask) {
    int64_t* flat = flat_.data();
    uint8_t* ok = ok_.data();
    for (int l = 0; l < n; ++l) {
      flat[l] = 0;
      ok[l] = !mask || mask[l];
    }
    bool failed = false;
    for (const Axis& axis : axes_) {
      const int64_t* part = axis.lane_part.empty() ? nullptr : axis.lane_part.data();
      for (int l = 0; l < n; ++l) {
        int64_t v = axis.scalar + (part ? part[l] : 0);
        bool inside = v >= 0 && v < axis.extent;
        failed = failed || (!inside && ok[l]);
        ok[l] = ok[l] && inside;
        flat[l] += v * axis.stride;
      }
    }
    if (failed && !expr_.guarded) report_first_out_of_bounds(n, mask);
    lane_of<S>* out = this->values();
    for (int l = 0; l < n; ++l) out[l] = ok[l] ? lane_of<S>(data_[flat[l]]) : lane_of<S>(0);
  }

  /// The first used lane, in domain order, with an index out of bounds.
  [[noreturn]] void report_first_out_of_bounds(int n, const uint8_t* mask) const {
    for (int l = 0; l < n; ++l) {
      if (mask && !mask[l]) continue;
      for (size_t d = 0; d < axes_.size(); ++d) {
        const Axis& axis = axes_[d];
        int64_t v = axis.scalar + (axis.lane_part.empty() ? 0 : axis.lane_part[size_t(l)]);
        if (v < 0 || v >= axis.extent) out_of_bounds(d, v, l);
      }
    }
    TENET_UNREACHABLE("interpreter: no out-of-bounds lane after all");
  }

  [[noreturn]] void out_of_bounds(size_t d, int64_t v, int lane) const {
    std::string read = expr_.tensor->name + "(";
    for (size_t i = 0; i < expr_.indices.size(); ++i)
      read += (i ? ", " : "") + expr_.indices[i].str();
    std::string at = dom_.position_at(lane);
    throw BindError("out-of-bounds read " + read + ") in the statement defining '" +
                    dom_.statement + "': dimension " + std::to_string(d) + " index " +
                    expr_.indices[d].str() + " = " + std::to_string(v) + " is outside [0, " +
                    std::to_string(axes_[d].extent) + ")" + (at.empty() ? "" : " at " + at));
  }

  const ExprNode& expr_;
  const Domain& dom_;
  const S* data_;
  std::vector<Axis> axes_;
  std::vector<int64_t> offsets_;  // sum of stride * lane_part over the axes
  Pattern pattern_ = Pattern::Gather;
  int64_t base_ = 0;           // sum of stride * scalar at the current outer point
  std::vector<int64_t> flat_;  // eval_near_border: per lane offset and validity
  std::vector<uint8_t> ok_;
};

/// A read with a computed index (ExprNode::computed): every index is an
/// int64 node (affine ones too), evaluated for the used lanes, each lane
/// checked and read on its own. An index out of range is an error worded as
/// generated code words it (runtime/tenet_index.h), or reads 0 when guarded.
template <typename S>
class ComputedReadNode final : public LaneNode<lane_of<S>> {
 public:
  ComputedReadNode(const ExprNode& e, const Tensor& src, const CompileContext& ctx)
      : LaneNode<lane_of<S>>(ctx.domain.lanes), expr_(e), dom_(ctx.domain), data_(src.data<S>()) {
    int64_t stride = 1;
    extents_.resize(e.indices.size());
    strides_.resize(e.indices.size());
    for (size_t d = e.indices.size(); d-- > 0;) {
      extents_[d] = src.shape()[d];
      strides_[d] = stride;
      stride *= extents_[d];
    }
    for (size_t d = 0; d < e.indices.size(); ++d) {
      CompileContext index_ctx = ctx;
      index_ctx.index_read = &e;
      index_ctx.index_dim = d;
      index_nodes_.push_back(compile_expr(index_value(e, d), index_ctx));
      indices_.push_back(static_cast<LaneNode<int64_t>*>(index_nodes_.back().get()));
    }
  }

  void eval(int n, const uint8_t* mask) override {
    for (auto& node : index_nodes_) node->eval(n, mask);
    lane_of<S>* out = this->values();
    for (int l = 0; l < n; ++l) {
      out[l] = lane_of<S>(0);
      if (mask && !mask[l]) continue;
      int64_t flat = 0;
      bool inside = true;
      for (size_t d = 0; d < indices_.size() && inside; ++d) {
        const int64_t v = indices_[d]->values()[l];
        inside = v >= 0 && v < extents_[d];
        if (!inside && !expr_.guarded) throw_index_error(expr_, d, dom_, l, 0, v, extents_[d]);
        flat += v * strides_[d];
      }
      if (inside) out[l] = lane_of<S>(data_[flat]);
    }
  }

 private:
  const ExprNode& expr_;
  const Domain& dom_;
  const S* data_;
  std::vector<int64_t> extents_, strides_;
  std::vector<std::unique_ptr<Node>> index_nodes_;
  std::vector<LaneNode<int64_t>*> indices_;
};

}  // namespace

void throw_index_error(const ExprNode& read, size_t d, const Domain& dom, int lane, char op,
                       int64_t a, int64_t b) {
  std::string names;
  std::vector<int64_t> at;
  for (const auto& [var, value] : dom.loop_vars) {
    names += (names.empty() ? "" : ", ") + var;
    at.push_back(value);
  }
  for (size_t k = 0; k < dom.indices.size(); ++k) {
    const Domain::Index& ix = dom.indices[k];
    names += (names.empty() ? "" : ", ") + ix.name;
    at.push_back(ix.lo + dom.outer_pos[k] + (ix.in_box ? ix.lane_pos[size_t(lane)] : 0));
  }
  const std::string index = index_text(index_value(read, d)), text = read_text(read);
  const IndexSite site{index.c_str(), text.c_str(),          read.tensor->name.c_str(),
                       int(d),        dom.statement.c_str(), names.c_str()};
  throw BindError(op ? index_overflow_message(site, op, a, b, at.data())
                     : index_error_message(site, a, b, at.data()));
}

std::unique_ptr<Node> make_computed_read_node(const ExprNode& e, const Tensor& src,
                                              const CompileContext& ctx) {
  return with_storage_type(src.type(), [&](auto s) -> std::unique_ptr<Node> {
    return std::make_unique<ComputedReadNode<decltype(s)>>(e, src, ctx);
  });
}

std::unique_ptr<Node> make_read_node(const ExprNode& e, const Tensor& src, const Domain& domain,
                                     const SizeBindings& sizes) {
  return with_storage_type(src.type(), [&](auto s) -> std::unique_ptr<Node> {
    return std::make_unique<ReadNode<decltype(s)>>(e, src, domain, sizes);
  });
}

}  // namespace tenet::ir::interp
