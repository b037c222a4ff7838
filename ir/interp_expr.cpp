#include "ir/interp_expr.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/affine.h"
#include "runtime/tenet_index.h"
#include "support/error.h"

namespace tenet::ir::interp {

namespace {

template <typename S>
using L = lane_of<S>;
template <typename S>
constexpr bool is_fp = is_float_storage<S>;

/// Integer results wrap to their declared width (two's complement), as the
/// generated C code does; int64 arithmetic wraps through uint64 so that
/// overflow is defined behaviour.
template <typename S>
int64_t wrap(int64_t v) {
  return static_cast<int64_t>(static_cast<S>(v));
}
int64_t add_wrap(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) + uint64_t(b));
}
int64_t sub_wrap(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) - uint64_t(b));
}
int64_t mul_wrap(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) * uint64_t(b));
}

/// Float to integer truncates toward zero; NaN gives 0 and values beyond the
/// int64 range saturate (C leaves both undefined, the oracle must not).
int64_t truncate_to_int64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return int64_t(v);
}

template <typename From, typename To>
L<To> convert(L<From> v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != 0;
  } else if constexpr (std::is_same_v<To, Half>) {
    return float(Half(float(v)));  // rounds to half (integers through float, as C++ does)
  } else if constexpr (is_fp<To>) {
    return static_cast<To>(v);
  } else if constexpr (is_fp<From>) {
    return float_to_int<To>(v);  // runtime/tenet_runtime.h: what generated code calls
  } else {
    return L<To>(wrap<To>(int64_t(v)));
  }
}

template <typename T>
LaneNode<T>* lanes_of(const std::unique_ptr<Node>& node) {
  auto* typed = dynamic_cast<LaneNode<T>*>(node.get());
  TENET_ASSERT(typed != nullptr, "interpreter: operand computed in an unexpected type");
  return typed;
}

template <typename T, typename F>
void map1(int n, const T* a, T* out, F f) {
  for (int l = 0; l < n; ++l) out[l] = f(a[l]);
}
template <typename T, typename R, typename F>
void map2(int n, const T* a, const T* b, R* out, F f) {
  for (int l = 0; l < n; ++l) out[l] = f(a[l], b[l]);
}

template <typename S>
class ConstNode final : public LaneNode<L<S>> {
 public:
  ConstNode(int lanes, L<S> value) : LaneNode<L<S>>(lanes) {
    std::fill(this->values_.begin(), this->values_.end(), value);
  }
  void eval(int, const uint8_t*) override {}
};

/// The value of a domain index: lo + outer position + position in the box.
class IndexNode final : public LaneNode<int64_t> {
 public:
  IndexNode(const Domain& domain, int k) : LaneNode<int64_t>(domain.lanes), dom_(domain), k_(k) {}
  void eval(int n, const uint8_t*) override {
    const Domain::Index& ix = dom_.indices[size_t(k_)];
    int64_t base = ix.lo + dom_.outer_pos[size_t(k_)];
    int64_t* out = values();
    if (!ix.in_box) {
      std::fill_n(out, n, base);
      return;
    }
    const int64_t* pos = ix.lane_pos.data();
    for (int l = 0; l < n; ++l) out[l] = base + pos[l];
  }

 private:
  const Domain& dom_;
  int k_;
};

/// out = op(x) on n lanes of floating-point values (float or double).
template <typename T>
void float_unary(UnOp op, int n, const T* x, T* out) {
  switch (op) {
    case UnOp::Neg:
      return map1(n, x, out, [](T v) { return -v; });
    case UnOp::Exp:
      return map1(n, x, out, [](T v) { return std::exp(v); });
    case UnOp::Log:
      return map1(n, x, out, [](T v) { return std::log(v); });
    case UnOp::Sqrt:
      return map1(n, x, out, [](T v) { return std::sqrt(v); });
    case UnOp::Tanh:
      return map1(n, x, out, [](T v) { return std::tanh(v); });
    case UnOp::Sigmoid:
      return map1(n, x, out, [](T v) { return T(1) / (T(1) + std::exp(-v)); });
    case UnOp::Abs:
      return map1(n, x, out, [](T v) { return std::fabs(v); });
    case UnOp::Rsqrt:
      return map1(n, x, out, [](T v) { return T(1) / std::sqrt(v); });
    case UnOp::Floor:
      return map1(n, x, out, [](T v) { return std::floor(v); });
    case UnOp::Ceil:
      return map1(n, x, out, [](T v) { return std::ceil(v); });
    case UnOp::Round:
      return map1(n, x, out, [](T v) { return std::round(v); });
    case UnOp::Trunc:
      return map1(n, x, out, [](T v) { return std::trunc(v); });
    case UnOp::Rint:
      return map1(n, x, out, [](T v) { return std::rint(v); });
    case UnOp::Exp2:
      return map1(n, x, out, [](T v) { return std::exp2(v); });
    case UnOp::Log2:
      return map1(n, x, out, [](T v) { return std::log2(v); });
    case UnOp::Log10:
      return map1(n, x, out, [](T v) { return std::log10(v); });
    case UnOp::Log1p:
      return map1(n, x, out, [](T v) { return std::log1p(v); });
    case UnOp::Expm1:
      return map1(n, x, out, [](T v) { return std::expm1(v); });
    case UnOp::Sin:
      return map1(n, x, out, [](T v) { return std::sin(v); });
    case UnOp::Cos:
      return map1(n, x, out, [](T v) { return std::cos(v); });
    case UnOp::Tan:
      return map1(n, x, out, [](T v) { return std::tan(v); });
    case UnOp::Asin:
      return map1(n, x, out, [](T v) { return std::asin(v); });
    case UnOp::Acos:
      return map1(n, x, out, [](T v) { return std::acos(v); });
    case UnOp::Atan:
      return map1(n, x, out, [](T v) { return std::atan(v); });
    case UnOp::Sinh:
      return map1(n, x, out, [](T v) { return std::sinh(v); });
    case UnOp::Cosh:
      return map1(n, x, out, [](T v) { return std::cosh(v); });
    case UnOp::Erf:
      return map1(n, x, out, [](T v) { return std::erf(v); });
    case UnOp::Erfc:
      return map1(n, x, out, [](T v) { return std::erfc(v); });
    case UnOp::Cbrt:
      return map1(n, x, out, [](T v) { return std::cbrt(v); });
    case UnOp::Sign:  // as tenet::sign in the runtime
      return map1(n, x, out, [](T v) { return v > 0 ? T(1) : v < 0 ? T(-1) : v; });
    case UnOp::StopGradient:
      return map1(n, x, out, [](T v) { return v; });
    case UnOp::Not:
      break;
  }
  TENET_UNREACHABLE(std::string("interpreter: ") + op_name(op) + " of a float");
}

template <typename S>
class UnaryNode final : public LaneNode<L<S>> {
 public:
  UnaryNode(int lanes, UnOp op, std::unique_ptr<Node> a)
      : LaneNode<L<S>>(lanes), op_(op), a_(std::move(a)), x_(lanes_of<L<S>>(a_)) {}

  void eval(int n, const uint8_t* mask) override {
    using T = L<S>;
    a_->eval(n, mask);
    const T* x = x_->values();
    T* out = this->values();
    if constexpr (is_fp<S>) {
      return float_unary(op_, n, x, out);
    } else {
      switch (op_) {
        case UnOp::Neg:
          return map1(n, x, out, [](T v) { return T(wrap<S>(sub_wrap(0, v))); });
        case UnOp::Abs:
          if constexpr (std::is_unsigned_v<S>) return map1(n, x, out, [](T v) { return v; });
          return map1(n, x, out,
                      [](T v) { return int64_t(v) < 0 ? T(wrap<S>(sub_wrap(0, v))) : v; });
        case UnOp::Not:
          return map1(n, x, out, [](T v) { return T(v == 0); });
        default:
          break;
      }
    }
    TENET_UNREACHABLE(std::string("interpreter: ") + op_name(op_) + " of an integer");
  }

 private:
  UnOp op_;
  std::unique_ptr<Node> a_;
  LaneNode<L<S>>* x_;
};

/// Arithmetic and logic: the result has the operands' type.
template <typename S>
class BinaryNode final : public LaneNode<L<S>> {
 public:
  BinaryNode(int lanes, BinOp op, std::unique_ptr<Node> a, std::unique_ptr<Node> b,
             const Domain& domain)
      : LaneNode<L<S>>(lanes),
        op_(op),
        a_(std::move(a)),
        b_(std::move(b)),
        x_(lanes_of<L<S>>(a_)),
        y_(lanes_of<L<S>>(b_)),
        dom_(domain) {}

  void eval(int n, const uint8_t* mask) override {
    using T = L<S>;
    a_->eval(n, mask);
    b_->eval(n, mask);
    const T* x = x_->values();
    const T* y = y_->values();
    T* out = this->values();
    if constexpr (is_fp<S>) {
      switch (op_) {
        // Plain loops for the common operators: fast in unoptimised builds too.
        case BinOp::Add:
          for (int l = 0; l < n; ++l) out[l] = x[l] + y[l];
          return;
        case BinOp::Sub:
          for (int l = 0; l < n; ++l) out[l] = x[l] - y[l];
          return;
        case BinOp::Mul:
          for (int l = 0; l < n; ++l) out[l] = x[l] * y[l];
          return;
        case BinOp::Div:
          for (int l = 0; l < n; ++l) out[l] = x[l] / y[l];
          return;
        case BinOp::Pow:
          return map2(n, x, y, out, [](T a, T b) { return std::pow(a, b); });
        case BinOp::Max:
          return map2(n, x, y, out, [](T a, T b) { return tenet::math::max(a, b); });
        case BinOp::Min:
          return map2(n, x, y, out, [](T a, T b) { return tenet::math::min(a, b); });
        case BinOp::Atan2:
          return map2(n, x, y, out, [](T a, T b) { return std::atan2(a, b); });
        case BinOp::Hypot:
          return map2(n, x, y, out, [](T a, T b) { return std::hypot(a, b); });
        case BinOp::Copysign:
          return map2(n, x, y, out, [](T a, T b) { return std::copysign(a, b); });
        case BinOp::Nextafter:
          return map2(n, x, y, out, [](T a, T b) { return std::nextafter(a, b); });
        default:
          break;
      }
    } else {
      switch (op_) {
        case BinOp::Add:
          return map2(n, x, y, out, [](T a, T b) { return T(wrap<S>(add_wrap(a, b))); });
        case BinOp::Sub:
          return map2(n, x, y, out, [](T a, T b) { return T(wrap<S>(sub_wrap(a, b))); });
        case BinOp::Mul:
          return map2(n, x, y, out, [](T a, T b) { return T(wrap<S>(mul_wrap(a, b))); });
        case BinOp::Div:
          return divide(n, x, y, out, mask, false);
        case BinOp::Rem:
          return divide(n, x, y, out, mask, true);
        case BinOp::Max:
          return map2(n, x, y, out, [](T a, T b) { return std::max(a, b); });
        case BinOp::Min:
          return map2(n, x, y, out, [](T a, T b) { return std::min(a, b); });
        case BinOp::And:
          return map2(n, x, y, out, [](T a, T b) { return T(a && b); });
        case BinOp::Or:
          return map2(n, x, y, out, [](T a, T b) { return T(a || b); });
        default:
          break;
      }
    }
    TENET_UNREACHABLE(std::string("interpreter: binary ") + op_name(op_) + " on this type");
  }

 private:
  /// Integer division truncates toward zero, like C; a zero divisor in a lane
  /// that is used is a user error, never a crash.
  // Truncating integer division (or its remainder), as C and tenet::int_div/int_rem.
  void divide(int n, const L<S>* x, const L<S>* y, L<S>* out, const uint8_t* mask, bool remainder) {
    using T = L<S>;
    for (int l = 0; l < n; ++l) {
      if (y[l] == 0) {
        if (!mask || mask[l])
          throw BindError(std::string(remainder ? "integer remainder" : "integer division") +
                          " by zero in the statement defining '" + dom_.statement + "'" +
                          (dom_.indices.empty() && dom_.loop_vars.empty()
                               ? std::string()
                               : " at " + dom_.position_at(l)));
        out[l] = 0;
      } else if constexpr (std::is_unsigned_v<T>) {  // uint64 lanes
        out[l] = remainder ? T(x[l] % y[l]) : T(x[l] / y[l]);
      } else if (int64_t(y[l]) == -1) {
        out[l] = remainder ? T(0) : T(wrap<S>(sub_wrap(0, x[l])));  // INT64_MIN / -1 overflows
      } else if (remainder) {
        out[l] = T(wrap<S>(int64_t(x[l]) % int64_t(y[l])));
      } else {
        out[l] = T(wrap<S>(int64_t(x[l]) / int64_t(y[l])));
      }
    }
  }

  BinOp op_;
  std::unique_ptr<Node> a_, b_;
  LaneNode<L<S>>* x_;
  LaneNode<L<S>>* y_;
  const Domain& dom_;
};

/// Comparisons of two operands of storage type S give bools.
template <typename S>
class CompareNode final : public LaneNode<uint8_t> {
 public:
  CompareNode(int lanes, BinOp op, std::unique_ptr<Node> a, std::unique_ptr<Node> b)
      : LaneNode<uint8_t>(lanes),
        op_(op),
        a_(std::move(a)),
        b_(std::move(b)),
        x_(lanes_of<L<S>>(a_)),
        y_(lanes_of<L<S>>(b_)) {}

  void eval(int n, const uint8_t* mask) override {
    using T = L<S>;
    a_->eval(n, mask);
    b_->eval(n, mask);
    const T* x = x_->values();
    const T* y = y_->values();
    uint8_t* out = values();
    switch (op_) {
      case BinOp::Lt:
        return map2(n, x, y, out, [](T a, T b) { return uint8_t(a < b); });
      case BinOp::Le:
        return map2(n, x, y, out, [](T a, T b) { return uint8_t(a <= b); });
      case BinOp::Gt:
        return map2(n, x, y, out, [](T a, T b) { return uint8_t(a > b); });
      case BinOp::Ge:
        return map2(n, x, y, out, [](T a, T b) { return uint8_t(a >= b); });
      case BinOp::Eq:
        return map2(n, x, y, out, [](T a, T b) { return uint8_t(a == b); });
      case BinOp::Ne:
        return map2(n, x, y, out, [](T a, T b) { return uint8_t(a != b); });
      default:
        TENET_UNREACHABLE(std::string("interpreter: ") + op_name(op_) + " is no comparison");
    }
  }

 private:
  BinOp op_;
  std::unique_ptr<Node> a_, b_;
  LaneNode<L<S>>* x_;
  LaneNode<L<S>>* y_;
};

/// Evaluates each branch only for the lanes that take it, so the untaken
/// branch can neither fail nor read out of bounds.
template <typename S>
class SelectNode final : public LaneNode<L<S>> {
 public:
  SelectNode(int lanes, std::unique_ptr<Node> c, std::unique_ptr<Node> t, std::unique_ptr<Node> e)
      : LaneNode<L<S>>(lanes),
        c_(std::move(c)),
        t_(std::move(t)),
        e_(std::move(e)),
        cond_(lanes_of<uint8_t>(c_)),
        then_(lanes_of<L<S>>(t_)),
        else_(lanes_of<L<S>>(e_)),
        then_mask_(size_t(lanes)),
        else_mask_(size_t(lanes)) {}

  void eval(int n, const uint8_t* mask) override {
    c_->eval(n, mask);
    const uint8_t* cond = cond_->values();
    uint8_t* then_mask = then_mask_.data();
    uint8_t* else_mask = else_mask_.data();
    int then_count = 0, else_count = 0;
    for (int l = 0; l < n; ++l) {
      uint8_t active = !mask || mask[l];
      then_mask[l] = active && cond[l];
      else_mask[l] = active && !cond[l];
      then_count += then_mask[l];
      else_count += else_mask[l];
    }
    // A branch that all used lanes take runs under the caller's mask.
    if (then_count) t_->eval(n, else_count ? then_mask : mask);
    if (else_count) e_->eval(n, then_count ? else_mask : mask);
    const L<S>* a = then_->values();
    const L<S>* b = else_->values();
    L<S>* out = this->values();
    for (int l = 0; l < n; ++l) out[l] = cond[l] ? a[l] : b[l];
  }

 private:
  std::unique_ptr<Node> c_, t_, e_;
  LaneNode<uint8_t>* cond_;
  LaneNode<L<S>>* then_;
  LaneNode<L<S>>* else_;
  std::vector<uint8_t> then_mask_, else_mask_;
};

template <typename From, typename To>
class CastNode final : public LaneNode<L<To>> {
 public:
  CastNode(int lanes, std::unique_ptr<Node> a)
      : LaneNode<L<To>>(lanes), a_(std::move(a)), x_(lanes_of<L<From>>(a_)) {}
  void eval(int n, const uint8_t* mask) override {
    a_->eval(n, mask);
    const L<From>* x = x_->values();
    L<To>* out = this->values();
    for (int l = 0; l < n; ++l) out[l] = convert<From, To>(x[l]);
  }

 private:
  std::unique_ptr<Node> a_;
  LaneNode<L<From>>* x_;
};

template <typename S>
L<S> const_value(double v) {
  if constexpr (std::is_same_v<S, bool>) {
    return v != 0;
  } else if constexpr (is_fp<S>) {
    return static_cast<L<S>>(v);
  } else {
    return L<S>(wrap<S>(truncate_to_int64(v)));
  }
}

}  // namespace

namespace {

/// One step of a computed index's int64 arithmetic (CompileContext::index_read):
/// exact, or an error at the first used lane whose value int64 cannot hold.
class IndexStepNode final : public LaneNode<int64_t> {
 public:
  IndexStepNode(char op, std::unique_ptr<Node> a, std::unique_ptr<Node> b,
                const CompileContext& ctx)
      : LaneNode<int64_t>(ctx.domain.lanes),
        op_(op),
        a_(std::move(a)),
        b_(std::move(b)),
        x_(lanes_of<int64_t>(a_)),
        y_(b_ ? lanes_of<int64_t>(b_) : nullptr),
        read_(*ctx.index_read),
        dim_(ctx.index_dim),
        dom_(ctx.domain) {}

  void eval(int n, const uint8_t* mask) override {
    a_->eval(n, mask);
    if (b_) b_->eval(n, mask);
    const int64_t* x = x_->values();
    const int64_t* y = y_ ? y_->values() : nullptr;
    int64_t* out = values();
    for (int l = 0; l < n; ++l) {
      const int64_t b = y ? y[l] : 0;
      if (exact_index_step(op_, x[l], b, out[l])) continue;
      out[l] = 0;
      if (!mask || mask[l]) throw_index_error(read_, dim_, dom_, l, op_, x[l], b);
    }
  }

 private:
  char op_;
  std::unique_ptr<Node> a_, b_;
  LaneNode<int64_t>* x_;
  LaneNode<int64_t>* y_;
  const ExprNode& read_;
  size_t dim_;
  const Domain& dom_;
};

/// An index of the statement (its lanes), or the value of an enclosing loop's variable.
std::unique_ptr<Node> compile_index(const ExprNode& e, const CompileContext& ctx) {
  int k = ctx.domain.find(e.index);
  if (k >= 0) return std::make_unique<IndexNode>(ctx.domain, k);
  for (const auto& [var, value] : ctx.domain.loop_vars)
    if (var == e.index) return std::make_unique<ConstNode<int64_t>>(ctx.domain.lanes, value);
  TENET_UNREACHABLE("interpreter: unknown index " + e.index + " in the statement defining " +
                    ctx.domain.statement);
}

/// A binary operation or comparison, on its operands' storage type.
std::unique_ptr<Node> compile_binary(const ExprNode& e, const CompileContext& ctx) {
  using NodePtr = std::unique_ptr<Node>;
  const ElemType operands = effective_type(e.args[0]->type, ctx.float_type);
  TENET_ASSERT(!floats_only(e.binop) || is_float(operands),
               "interpreter: " << op_name(e.binop) << " of integers");
  TENET_ASSERT(e.binop != BinOp::Rem || !is_float(operands), "interpreter: rem of floats");
  TENET_ASSERT(!is_logical(e.binop) || !is_float(operands), "interpreter: logic on floats");
  NodePtr a = compile_expr(e.args[0], ctx);
  NodePtr b = compile_expr(e.args[1], ctx);
  const int lanes = ctx.domain.lanes;
  return with_storage_type(operands, [&](auto s) -> NodePtr {
    using S = decltype(s);
    if (is_comparison(e.binop))
      return std::make_unique<CompareNode<S>>(lanes, e.binop, std::move(a), std::move(b));
    return std::make_unique<BinaryNode<S>>(lanes, e.binop, std::move(a), std::move(b), ctx.domain);
  });
}

}  // namespace

std::unique_ptr<Node> compile_expr(const Expr& e, const CompileContext& ctx) {
  if (const char op = ctx.index_read ? index_step_op(*e) : 0) {
    std::unique_ptr<Node> a = compile_expr(e->args[0], ctx);
    std::unique_ptr<Node> b = op == '~' ? nullptr : compile_expr(e->args[1], ctx);
    return std::make_unique<IndexStepNode>(op, std::move(a), std::move(b), ctx);
  }
  using NodePtr = std::unique_ptr<Node>;
  const int lanes = ctx.domain.lanes;
  const ElemType type = effective_type(e->type, ctx.float_type);
  auto operand_type = [&](size_t i) { return effective_type(e->args[i]->type, ctx.float_type); };
  switch (e->kind) {
    case ExprKind::Const:
      return with_storage_type(type, [&](auto s) -> NodePtr {
        using S = decltype(s);
        return std::make_unique<ConstNode<S>>(lanes, const_value<S>(e->value));
      });
    case ExprKind::Index:
      return compile_index(*e, ctx);
    case ExprKind::Size:
      return std::make_unique<ConstNode<int64_t>>(lanes, e->size.eval(ctx.sizes));
    case ExprKind::Read: {
      auto it = ctx.tensors.find(e->tensor.get());
      TENET_ASSERT(it != ctx.tensors.end(), "interpreter: " << e->tensor->name << " not computed");
      const Tensor& src = it->second;
      TENET_ASSERT(compute_type(src.type()) == type,
                   "interpreter: " << e->tensor->name << " holds " << type_name(src.type()));
      if (e->has_computed_index()) return make_computed_read_node(*e, src, ctx);
      return make_read_node(*e, src, ctx.domain, ctx.sizes);
    }
    case ExprKind::Unary: {
      TENET_ASSERT(is_float(type) || e->unop == UnOp::Neg || e->unop == UnOp::Abs ||
                       (e->unop == UnOp::Not && type == ElemType::Bool),
                   "interpreter: " << op_name(e->unop) << " of " << type_name(type));
      NodePtr a = compile_expr(e->args[0], ctx);
      return with_storage_type(type, [&](auto s) -> NodePtr {
        return std::make_unique<UnaryNode<decltype(s)>>(lanes, e->unop, std::move(a));
      });
    }
    case ExprKind::Binary:
      return compile_binary(*e, ctx);
    case ExprKind::Select: {
      NodePtr c = compile_expr(e->args[0], ctx);
      NodePtr t = compile_expr(e->args[1], ctx);
      NodePtr f = compile_expr(e->args[2], ctx);
      return with_storage_type(type, [&](auto s) -> NodePtr {
        return std::make_unique<SelectNode<decltype(s)>>(lanes, std::move(c), std::move(t),
                                                         std::move(f));
      });
    }
    case ExprKind::Cast: {
      NodePtr a = compile_expr(e->args[0], ctx);
      if (operand_type(0) == type) return a;  // e.g. float32 -> float64 with float_type F64
      return with_storage_type(operand_type(0), [&](auto from) -> NodePtr {
        return with_storage_type(type, [&](auto to) -> NodePtr {
          return std::make_unique<CastNode<decltype(from), decltype(to)>>(lanes, std::move(a));
        });
      });
    }
  }
  TENET_UNREACHABLE("interpreter: unknown expression kind");
}

}  // namespace tenet::ir::interp
