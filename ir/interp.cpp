// The reference interpreter's driver: statements, loops and reductions. The
// numeric semantics it defines, which compiled code must reproduce:
//  - float32 values are computed in float, rounded after every operation, and
//    float64 in double; InterpOptions::float_type replaces both.
//  - max and min, binary and reductions, are IEEE 754-2019 maximumNumber and
//    minimumNumber (tenet::math::max/min): a NaN operand is ignored and -0
//    counts below +0, so a reduction's bits do not depend on its order.
//  - integers wrap to their width (two's complement; unsigned types modulo
//    2^width, uint64 computed in uint64); division truncates toward zero and a
//    zero divisor is a BindError.
//  - float16 values are read as float32, computed in float32 and rounded to
//    half (to nearest, ties to even) once, when a statement stores them.
//  - float -> integer casts truncate toward zero; NaN gives 0 and values beyond
//    int64 saturate (then wrap to the target width).
//  - reductions accumulate in domain order: out indices outer, reduce indices
//    inner, each in declaration order.
//  - a float32 sum accumulates in float64 and is rounded once, at the end
//    (each term is computed and rounded in float32 first); except a sum of
//    scatter form, which accumulates in float32 (ir/scatter_form.h). One in
//    vector lanes (Annotations::lanes = L) adds each term whose last reduce
//    index r (counted from its range's start) is below R - R % L into partial
//    sum r % L, the others into the result's accumulator in domain order, and
//    at the end the partial sums folded by tenet::sum_lanes_in_place.

#include "ir/interp.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "ir/bind.h"
#include "ir/interp_expr.h"
#include "ir/scatter_form.h"
#include "support/checked.h"
#include "support/error.h"

namespace tenet::ir {

namespace interp {

int Domain::find(const std::string& name) const {
  for (size_t k = 0; k < indices.size(); ++k)
    if (indices[k].name == name) return int(k);
  return -1;
}

std::string Domain::position_at(int lane) const {
  std::string out;
  auto add = [&](const std::string& name, int64_t v) {
    out += (out.empty() ? "" : ", ") + name + " = " + std::to_string(v);
  };
  for (const auto& [name, v] : loop_vars) add(name, v);
  for (size_t k = 0; k < indices.size(); ++k) {
    const Index& ix = indices[k];
    add(ix.name, ix.lo + outer_pos[k] + (ix.in_box ? ix.lane_pos[size_t(lane)] : 0));
  }
  return out;
}

}  // namespace interp

namespace {

using interp::CompileContext;
using interp::Domain;
using interp::lane_of;
using interp::LaneNode;
using interp::LoopVars;
using interp::Tensors;

/// Lanes in one box: enough that the per-point overhead (bounds checks, node
/// dispatch) disappears, few enough that all node buffers stay in cache.
constexpr int64_t kMaxLanes = 2048;

template <typename S>
S reduce_identity(ReduceOp op) {
  if constexpr (std::is_same_v<S, bool>) {
    return op == ReduceOp::Min || op == ReduceOp::Prod;
  } else if constexpr (std::is_floating_point_v<S>) {
    if (op == ReduceOp::Max) return -std::numeric_limits<S>::infinity();
    if (op == ReduceOp::Min) return std::numeric_limits<S>::infinity();
    return S(op == ReduceOp::Prod ? 1 : 0);
  } else {
    if (op == ReduceOp::Max) return std::numeric_limits<S>::lowest();
    if (op == ReduceOp::Min) return std::numeric_limits<S>::max();
    return S(op == ReduceOp::Prod ? 1 : 0);
  }
}

/// Combines one reduction step; max and min ignore NaN (maximumNumber), integer
/// sums wrap, bools behave as or/and.
template <typename S>
lane_of<S> combine(ReduceOp op, lane_of<S> acc, lane_of<S> v) {
  if constexpr (std::is_same_v<S, bool>) {
    return op == ReduceOp::Min || op == ReduceOp::Prod ? (acc & v) : (acc | v);
  } else if constexpr (std::is_floating_point_v<S>) {
    if (op == ReduceOp::Max) return tenet::math::max(acc, v);
    if (op == ReduceOp::Min) return tenet::math::min(acc, v);
    if (op == ReduceOp::Prod) return acc * v;
    return acc + v;
  } else {
    if (op == ReduceOp::Max) return std::max(acc, v);
    if (op == ReduceOp::Min) return std::min(acc, v);
    if (op == ReduceOp::Prod) return int64_t(uint64_t(acc) * uint64_t(v));
    return int64_t(uint64_t(acc) + uint64_t(v));
  }
}

/// Folds `groups` consecutive runs of `group_size` lane values (of type S)
/// into result[0, groups) (accumulators of type A: S, or double for a float
/// sum that accumulates in double), each run in lane (= domain) order.
template <typename S, typename A>
void fold(ReduceOp op, const lane_of<S>* v, int64_t groups, int64_t group_size, A* result) {
  using T = std::conditional_t<std::is_same_v<A, S>, lane_of<S>, A>;
  if (op == ReduceOp::None) {
    for (int64_t g = 0; g < groups; ++g) result[g] = static_cast<A>(v[g]);
    return;
  }
  for (int64_t g = 0; g < groups; ++g) {
    T acc = T(result[g]);
    const lane_of<S>* run = v + g * group_size;
    if constexpr (std::is_floating_point_v<S>) {
      // Plain loops, no call per element: fast in unoptimised builds too.
      if (op == ReduceOp::Sum) {
        for (int64_t k = 0; k < group_size; ++k) acc += run[k];
      } else if (op == ReduceOp::Max) {
        for (int64_t k = 0; k < group_size; ++k) acc = tenet::math::max(acc, T(run[k]));
      } else if (op == ReduceOp::Prod) {
        for (int64_t k = 0; k < group_size; ++k) acc *= run[k];
      } else {
        for (int64_t k = 0; k < group_size; ++k) acc = tenet::math::min(acc, T(run[k]));
      }
    } else {
      for (int64_t k = 0; k < group_size; ++k) acc = combine<S>(op, acc, run[k]);
    }
    result[g] = static_cast<A>(acc);
  }
}

/// The terms of a float32 sum in vector lanes: the last reduce index of the
/// box's lane k is `last_at[k] + last_offset`; terms below `split` go into
/// the partial sums of their element (`partial`, `lanes` per element), the
/// others into result[0, groups) as fold does.
struct LaneSums {
  int64_t lanes = 0, split = 0, last_offset = 0;
  const int64_t* last_at = nullptr;
  double* partial = nullptr;
};

void fold_in_lanes(const float* v, int64_t groups, int64_t group_size, double* result,
                   const LaneSums& ls) {
  for (int64_t g = 0, k = 0; g < groups; ++g) {
    double acc = result[g];
    double* partial = ls.partial + g * ls.lanes;
    for (const int64_t end = k + group_size; k < end; ++k) {
      const int64_t r = ls.last_at[k] + ls.last_offset;
      if (r < ls.split)
        partial[r % ls.lanes] += v[k];
      else
        acc += v[k];
    }
    result[g] = acc;
  }
}

/// sum(a(...) * b(...)) over float tensors, the shape of every contraction
/// (matmul, convolution and their gradients), which dominate the work: while
/// both reads are in bounds it is folded straight from the two tensors,
/// skipping the lane buffers. Rounding is the same as the general path's: the
/// product is rounded to S, then added.
template <typename S>
class Contraction {
 public:
  static std::optional<Contraction> match(const Compute& c, const CompileContext& ctx) {
    const Expr& body = c.body;
    if (c.op != ReduceOp::Sum || body->kind != ExprKind::Binary || body->binop != BinOp::Mul ||
        body->args[0]->kind != ExprKind::Read || body->args[1]->kind != ExprKind::Read)
      return std::nullopt;
    Contraction dot;
    dot.a_node_ = interp::compile_expr(body->args[0], ctx);
    dot.b_node_ = interp::compile_expr(body->args[1], ctx);
    dot.a_ = dynamic_cast<interp::DirectRead<S>*>(dot.a_node_.get());
    dot.b_ = dynamic_cast<interp::DirectRead<S>*>(dot.b_node_.get());
    if (!dot.a_ || !dot.b_) return std::nullopt;
    return dot;
  }

  /// Folds the box into result[0, groups) (accumulators of type A); false
  /// (and nothing done) when a read is out of bounds somewhere in the box.
  template <typename A>
  bool fold(int n, int64_t groups, int64_t group_size, A* result) {
    const S *a, *b;
    int64_t a_base, b_base;
    const int64_t *a_off, *b_off;
    if (!a_->locate(n, a, a_base, a_off) || !b_->locate(n, b, b_base, b_off)) return false;
    for (int64_t g = 0, l = 0; g < groups; ++g) {
      A acc = result[g];
      for (const int64_t end = l + group_size; l < end; ++l) {
        S product = a[a_base + a_off[l]] * b[b_base + b_off[l]];
        acc += product;
      }
      result[g] = acc;
    }
    return true;
  }

 private:
  std::unique_ptr<interp::Node> a_node_, b_node_;
  interp::DirectRead<S>* a_ = nullptr;
  interp::DirectRead<S>* b_ = nullptr;
};

struct ComputeRun {
  const Compute& stmt;
  const Tensors& tensors;
  const SizeBindings& sizes;
  const LoopVars& loop_vars;
  std::optional<ElemType> float_type;
  int64_t lanes = 0;  // Annotations::lanes
};

/// Starts the result from `init`, from the reduction's identity, or (for a
/// plain assignment, which writes every element) from zeros.
void initialise(Tensor& result, const ComputeRun& run) {
  const Compute& c = run.stmt;
  if (c.init) {
    const Tensor& init = run.tensors.at(c.init.get());
    // A float32 sum accumulates in double from its float32 init.
    const bool widened = init.type() == ElemType::F32 && result.type() == ElemType::F64;
    TENET_ASSERT(
        (compute_type(init.type()) == result.type() || widened) && init.shape() == result.shape(),
        "interpreter: init " << c.init->name << " is " << init.describe());
    if (init.type() != result.type())  // float16 storage, or a float32 sum in double
      result = init.cast(result.type());
    else
      std::memcpy(result.raw(), init.raw(), result.nbytes());
    return;
  }
  if (c.op == ReduceOp::None) return;
  interp::with_storage_type(result.type(), [&](auto s) {
    using S = decltype(s);
    std::fill_n(result.data<S>(), result.numel(), reduce_identity<S>(c.op));
  });
}

/// The domain of `c`: its out indices, then its reduce indices, with their ranges.
Domain make_domain(const ComputeRun& run) {
  const Compute& c = run.stmt;
  Domain dom;
  dom.statement = c.result->name;
  dom.loop_vars = run.loop_vars;
  for (const auto* dims : {&c.out, &c.reduce}) {
    for (const Dim& d : *dims) {
      Domain::Index ix;
      ix.name = d.index;
      ix.lo = d.lo.eval(run.sizes);
      ix.extent = d.hi.eval(run.sizes) - ix.lo;
      TENET_ASSERT(ix.extent >= 0, "interpreter: negative range of " << d.index);
      dom.indices.push_back(std::move(ix));
    }
  }
  return dom;
}

/// The box: the longest suffix of indices that fits in kMaxLanes lanes, plus a
/// chunk of the next index (`split`) when that one does not fit whole.
struct Box {
  int64_t inner = 1;    // lanes of the indices wholly in the box
  int split = -1;       // the index the box holds a chunk of; -1: none
  int64_t chunk = 1;    // the chunk's extent
  int last_outer = -1;  // the innermost index walked outside the box; -1: none
};

/// Plans the box of `dom` (whose extents are all positive) and sets the lanes
/// and the lane positions of its indices.
Box plan_box(Domain& dom) {
  const int n_dims = int(dom.indices.size());
  Box box;
  box.split = n_dims - 1;
  while (box.split >= 0 && dom.indices[size_t(box.split)].extent <= kMaxLanes / box.inner)
    box.inner *= dom.indices[size_t(box.split--)].extent;
  box.chunk = box.split >= 0 ? std::max<int64_t>(1, kMaxLanes / box.inner) : 1;
  const int first_box = std::max(box.split, 0);
  dom.lanes = int(box.chunk * box.inner);
  dom.tail_lanes = dom.lanes;
  if (box.split >= 0 && dom.indices[size_t(box.split)].extent % box.chunk != 0)
    dom.tail_lanes = int(dom.indices[size_t(box.split)].extent % box.chunk * box.inner);
  for (int64_t i = n_dims - 1, repeat = 1; i >= first_box; --i) {
    Domain::Index& ix = dom.indices[size_t(i)];
    int64_t box_extent = i == box.split ? box.chunk : ix.extent;
    ix.in_box = true;
    ix.outer = i == box.split;
    ix.lane_pos.resize(size_t(dom.lanes));
    for (int64_t l = 0; l < dom.lanes; ++l) ix.lane_pos[size_t(l)] = (l / repeat) % box_extent;
    repeat *= box_extent;
  }
  dom.outer_pos.assign(size_t(n_dims), 0);
  box.last_outer = box.split >= 0 ? box.split : first_box - 1;
  return box;
}

/// Moves `dom` to its next box, in domain order; false after the last.
bool next_box(Domain& dom, const Box& box) {
  for (int i = box.last_outer; i >= 0; --i) {
    int64_t& pos = dom.outer_pos[size_t(i)];
    pos += i == box.split ? box.chunk : 1;
    if (pos < dom.indices[size_t(i)].extent) return true;
    pos = 0;
  }
  return false;
}

/// A walk over a statement's boxes: the compiled body, and where each box's
/// lanes go in the result.
struct BoxWalk {
  const Compute& c;
  Domain& dom;
  const Box& box;
  const CompileContext& ctx;
  interp::Node& root;
  std::vector<int64_t> out_stride;  // of each out index in the result
  // When the box holds out indices it holds every reduce index too, so each
  // result element's whole reduction is one run of `reduce_points` lanes.
  bool box_has_out = false;
  int64_t reduce_points = 1;
  LaneSums lane_sums;  // a float32 sum in vector lanes (lanes = 0: not one)
};

/// Walks every box, folding its lanes into `out`. S: the type of the terms; A:
/// of the accumulators (S, or double).
template <typename S, typename A>
void walk_boxes(const BoxWalk& w, A* out) {
  const Compute& c = w.c;
  Domain& dom = w.dom;
  const int n_out = int(c.out.size());
  auto* values = dynamic_cast<LaneNode<lane_of<S>>*>(&w.root);
  TENET_ASSERT(values != nullptr,
               "interpreter: body of " << c.result->name << " has the wrong type");
  std::optional<Contraction<S>> dot;
  if constexpr (std::is_floating_point_v<S>) dot = Contraction<S>::match(c, w.ctx);
  do {
    int64_t n = dom.lanes;
    if (w.box.split >= 0)
      n = std::min(w.box.chunk,
                   dom.indices[size_t(w.box.split)].extent - dom.outer_pos[size_t(w.box.split)]) *
          w.box.inner;
    int64_t out_base = 0;
    for (int i = 0; i < n_out; ++i)
      if (dom.indices[size_t(i)].outer)
        out_base += dom.outer_pos[size_t(i)] * w.out_stride[size_t(i)];
    int64_t group_size = w.box_has_out ? w.reduce_points : n;
    bool folded = false;
    if constexpr (std::is_same_v<S, float> && std::is_same_v<A, double>) {
      if (w.lane_sums.lanes > 0) {
        w.root.eval(int(n), nullptr);
        LaneSums at = w.lane_sums;
        const size_t last = dom.indices.size() - 1;
        at.last_offset = dom.indices[last].outer ? dom.outer_pos[last] : 0;
        at.partial = w.lane_sums.partial + out_base * w.lane_sums.lanes;
        fold_in_lanes(values->values(), n / group_size, group_size, out + out_base, at);
        folded = true;
      }
    }
    if constexpr (std::is_floating_point_v<S>)
      folded = folded || (dot && dot->fold(int(n), n / group_size, group_size, out + out_base));
    if (!folded) {
      w.root.eval(int(n), nullptr);
      fold<S, A>(c.op, values->values(), n / group_size, group_size, out + out_base);
    }
  } while (next_box(dom, w.box));
}

/// Runs one Compute statement: plans the box (see interp_expr.h), compiles
/// the body, and walks the outer points in domain order.
Tensor run_compute(const ComputeRun& run) {
  const Compute& c = run.stmt;
  Domain dom = make_domain(run);
  const int n_out = int(c.out.size());
  const int n_dims = int(dom.indices.size());
  std::vector<int64_t> shape;
  for (int i = 0; i < n_out; ++i) shape.push_back(dom.indices[size_t(i)].extent);
  // A float16 result is computed in float32 and rounded once, when the
  // statement is done (compiled code keeps its accumulators in float too).
  const ElemType stored = interp::effective_type(c.result->type, run.float_type);
  const ElemType type = compute_type(stored);
  // A float32 sum accumulates in a float64 tensor, rounded once at the end.
  const bool wide = stored == ElemType::F32 && accumulates_in_double(c);
  const ElemType accumulated = wide ? ElemType::F64 : type;
  const std::string what = "tensor '" + c.result->name + "'";
  check_allocation(what + " of shape " + shape_text(shape),
                   check_tensor_bytes(what, accumulated, shape));
  Tensor result(accumulated, shape);
  initialise(result, run);
  auto finished = [&] { return stored == accumulated ? result : result.cast(stored); };

  // (Not a product of the extents: that may overflow, even wrap to 0.)
  for (const Domain::Index& ix : dom.indices)
    if (ix.extent == 0) return finished();
  const Box box = plan_box(dom);
  // Used only when the box holds the whole reduction, so at most kMaxLanes.
  int64_t reduce_points = 1;
  for (int i = n_out; i < n_dims; ++i)
    reduce_points = checked_mul(reduce_points, dom.indices[size_t(i)].extent).value_or(0);
  std::vector<int64_t> out_stride(size_t(n_out), 1);
  for (int i = n_out - 2; i >= 0; --i)
    out_stride[size_t(i)] = out_stride[size_t(i + 1)] * dom.indices[size_t(i + 1)].extent;

  // A float32 sum in vector lanes: each element's partial sums, added into it
  // once its whole reduction is done.
  LaneSums lane_sums;
  std::vector<double> partial;
  if (wide && c.op == ReduceOp::Sum && run.lanes > 0) {
    const Domain::Index& last = dom.indices.back();
    lane_sums.lanes = run.lanes;
    lane_sums.split = last.extent - last.extent % run.lanes;
    lane_sums.last_at = last.lane_pos.data();
    check_allocation(what + "'s partial sums",
                     check_tensor_bytes(what, ElemType::F64, {result.numel(), run.lanes}));
    partial.assign(size_t(result.numel() * run.lanes), 0.0);
    lane_sums.partial = partial.data();
  }

  CompileContext ctx{run.tensors, run.sizes, dom, run.float_type};
  std::unique_ptr<interp::Node> root = interp::compile_expr(c.body, ctx);
  const bool box_has_out = std::max(box.split, 0) < n_out;
  const BoxWalk w{c, dom, box, ctx, *root, out_stride, box_has_out, reduce_points, lane_sums};
  interp::with_storage_type(type, [&](auto s) {
    using S = decltype(s);
    if constexpr (std::is_same_v<S, float>)
      if (wide) return walk_boxes<S, double>(w, result.data<double>());
    walk_boxes<S, S>(w, result.data<S>());
  });
  if (lane_sums.lanes > 0) {
    double* out = result.data<double>();
    for (int64_t e = 0; e < result.numel(); ++e)
      out[e] += tenet::sum_lanes_in_place(partial.data() + e * lane_sums.lanes, lane_sums.lanes);
  }
  return finished();
}

class Interpreter {
 public:
  Interpreter(const SizeBindings& sizes, std::optional<ElemType> float_type)
      : sizes_(sizes), float_type_(float_type) {}

  Tensors tensors;

  void run(const std::vector<Stmt>& body) {
    for (const Stmt& s : body) {
      if (s.kind == StmtKind::Loop) {
        run_loop(*s.loop);
        continue;
      }
      Tensor t = run_compute(
          ComputeRun{s.compute, tensors, sizes_, loop_vars_, float_type_, s.annotations.lanes});
      tensors[s.compute.result.get()] = std::move(t);
    }
  }

 private:
  void run_loop(const Loop& loop) {
    for (const auto& c : loop.carried)
      if (c.init) tensors[c.param.get()] = tensors.at(c.init.get());
    loop_vars_.emplace_back(loop.var, 0);
    for (int64_t it = 0; it < loop.trip; ++it) {
      loop_vars_.back().second = it;
      run(loop.body);
      if (it + 1 == loop.trip) break;
      // Read every next value before assigning any param: a next may itself
      // be a param (a tensor carried unchanged).
      std::vector<Tensor> next;
      for (const auto& c : loop.carried)
        if (c.param) next.push_back(tensors.at(c.next.get()));
      size_t i = 0;
      for (const auto& c : loop.carried)
        if (c.param) tensors[c.param.get()] = next[i++];
    }
    loop_vars_.pop_back();
    for (const auto& c : loop.carried) tensors[c.result.get()] = tensors.at(c.next.get());
  }

  const SizeBindings& sizes_;
  std::optional<ElemType> float_type_;
  LoopVars loop_vars_;
};

}  // namespace

std::vector<Tensor> interpret(const Function& fn, const std::vector<Tensor>& inputs,
                              const SizeBindings& given_sizes, InterpOptions options) {
  if (options.float_type && !is_float(*options.float_type))
    throw BindError("the interpreter's float type must be float32 or float64, not " +
                    std::string(type_name(*options.float_type)));
  const SizeBindings sizes = bind_sizes(fn, inputs, given_sizes);
  Interpreter interpreter(sizes, options.float_type);
  for (size_t i = 0; i < inputs.size(); ++i) {
    ElemType type = interp::effective_type(inputs[i].type(), options.float_type);
    interpreter.tensors[fn.inputs[i].get()] =
        type == inputs[i].type() ? inputs[i] : inputs[i].cast(type);
  }
  interpreter.run(fn.body);

  std::vector<Tensor> outputs;
  for (const ValuePtr& v : fn.outputs) {
    Tensor t = interpreter.tensors.at(v.get());
    // Never hand back the caller's own input storage as an output.
    for (const Tensor& in : inputs)
      if (t.raw() == in.raw()) t = t.cast(t.type());
    outputs.push_back(std::move(t));
  }
  return outputs;
}

}  // namespace tenet::ir
