#include "passes/simplify.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "ir/affine.h"
#include "ir/builder.h"
#include "ir/mutator.h"
#include "runtime/tenet_runtime.h"

namespace tenet::passes {

using namespace ir;

namespace {

// ---- constants under the interpreter's semantics (ir/interp_expr.cpp) -------

// Two's-complement wrap to an integer type's width.
int64_t wrap_to(ElemType t, int64_t v) {
  switch (t) {
    case ElemType::I8:
      return int8_t(v);
    case ElemType::U8:
      return uint8_t(v);
    case ElemType::I16:
      return int16_t(v);
    case ElemType::I32:
      return int32_t(v);
    case ElemType::U16:
      return uint16_t(v);
    case ElemType::U32:
      return uint32_t(v);
    default:
      return v;
  }
}

// Float to integer: toward zero; NaN gives 0; out of range saturates.
int64_t truncate_to_int64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return int64_t(v);
}

int64_t int_value(const Expr& c) {
  return wrap_to(c->type, truncate_to_int64(c->value));
}

// The same double, bit for bit (any NaN matches any NaN).
bool identical(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

bool is_const(const Expr& e) {
  return e->kind == ExprKind::Const;
}

// True when e is the constant v of its type; for floats the sign of zero counts.
bool const_is(const Expr& e, double v) {
  if (!is_const(e) || e->type == ElemType::Bool) return false;
  if (is_float(e->type)) return identical(e->value, v);
  return double(int_value(e)) == v;
}

bool bool_const_is(const Expr& e, bool v) {
  return is_const(e) && e->type == ElemType::Bool && (e->value != 0) == v;
}

// Float operations fold only when float32 and float64 evaluation agree, so
// the folded constant is exact in either interpreter mode and in generated code.
template <typename F>
std::optional<double> agree(double a, double b, F op) {
  double wide = op(a, b);
  float narrow = op(float(a), float(b));
  if (!identical(double(narrow), wide)) return std::nullopt;
  return wide;
}

std::optional<double> fold_float(BinOp op, double a, double b) {
  switch (op) {
    case BinOp::Add:
      return agree(a, b, [](auto x, auto y) { return x + y; });
    case BinOp::Sub:
      return agree(a, b, [](auto x, auto y) { return x - y; });
    case BinOp::Mul:
      return agree(a, b, [](auto x, auto y) { return x * y; });
    case BinOp::Div:
      return agree(a, b, [](auto x, auto y) { return x / y; });
    case BinOp::Max:
    case BinOp::Min:
      // maximumNumber and minimumNumber, as the interpreter and generated code
      if (op == BinOp::Max)
        return agree(a, b, [](auto x, auto y) { return tenet::math::max(x, y); });
      return agree(a, b, [](auto x, auto y) { return tenet::math::min(x, y); });
    default:
      break;
  }
  if (!is_comparison(op)) return std::nullopt;  // pow: not correctly rounded
  auto compare = [op](auto x, auto y) {
    switch (op) {
      case BinOp::Lt:
        return x < y;
      case BinOp::Le:
        return x <= y;
      case BinOp::Gt:
        return x > y;
      case BinOp::Ge:
        return x >= y;
      case BinOp::Eq:
        return x == y;
      default:
        return x != y;
    }
  };
  bool wide = compare(a, b);
  if (wide != compare(float(a), float(b))) return std::nullopt;
  return wide ? 1.0 : 0.0;
}

std::optional<double> fold_int(BinOp op, ElemType t, int64_t a, int64_t b) {
  auto wrapped = [t](uint64_t v) { return double(wrap_to(t, int64_t(v))); };
  switch (op) {
    case BinOp::Add:
      return wrapped(uint64_t(a) + uint64_t(b));
    case BinOp::Sub:
      return wrapped(uint64_t(a) - uint64_t(b));
    case BinOp::Mul:
      return wrapped(uint64_t(a) * uint64_t(b));
    case BinOp::Div:
      if (b == 0) return std::nullopt;  // a run-time error; keep it
      return b == -1 ? wrapped(0 - uint64_t(a)) : double(wrap_to(t, a / b));
    case BinOp::Max:
      return double(std::max(a, b));
    case BinOp::Min:
      return double(std::min(a, b));
    case BinOp::Lt:
      return a < b;
    case BinOp::Le:
      return a <= b;
    case BinOp::Gt:
      return a > b;
    case BinOp::Ge:
      return a >= b;
    case BinOp::Eq:
      return a == b;
    case BinOp::Ne:
      return a != b;
    default:
      return std::nullopt;
  }
}

// uint64 constants are not folded: int64 arithmetic on doubles would get
// their division, order and values from 2^63 on wrong.
std::optional<Expr> fold_binary(BinOp op, const Expr& a, const Expr& b) {
  ElemType t = a->type;
  if (t == ElemType::U64) return std::nullopt;
  std::optional<double> r;
  if (t == ElemType::Bool) {
    bool x = a->value != 0, y = b->value != 0;
    if (op == BinOp::And) r = x && y;
    if (op == BinOp::Or) r = x || y;
    if (op == BinOp::Eq) r = x == y;
    if (op == BinOp::Ne) r = x != y;
  } else if (is_float(t)) {
    r = fold_float(op, a->value, b->value);
  } else {
    r = fold_int(op, t, int_value(a), int_value(b));
  }
  if (!r) return std::nullopt;
  return make_const(*r, is_comparison(op) ? ElemType::Bool : t);
}

std::optional<Expr> fold_unary(UnOp op, const Expr& a) {
  ElemType t = a->type;
  if (t == ElemType::U64) return std::nullopt;
  if (t == ElemType::Bool) {
    if (op == UnOp::Not) return make_const(a->value != 0 ? 0 : 1, t);
    return std::nullopt;
  }
  if (is_float(t)) {
    // Sign changes are exact; sqrt is correctly rounded; the rest are not.
    if (op == UnOp::Neg) return make_const(-a->value, t);
    if (op == UnOp::Abs) return make_const(std::fabs(a->value), t);
    if (op == UnOp::Sqrt) {
      double wide = std::sqrt(a->value);
      if (identical(double(std::sqrt(float(a->value))), wide)) return make_const(wide, t);
    }
    return std::nullopt;
  }
  int64_t v = int_value(a);
  if (op == UnOp::Neg || (op == UnOp::Abs && v < 0))
    return make_const(double(wrap_to(t, int64_t(0 - uint64_t(v)))), t);
  if (op == UnOp::Abs) return make_const(double(v), t);
  return std::nullopt;
}

std::optional<Expr> fold_cast(const Expr& a, ElemType to) {
  ElemType from = a->type;
  double v = a->value;
  // Rounding to float16 happens at run time (runtime/tenet_runtime.h).
  if (from == ElemType::U64 || to == ElemType::U64 || to == ElemType::F16) return std::nullopt;
  if (from == ElemType::Bool) return make_const(v != 0 ? 1 : 0, to);
  if (is_float(from)) {
    if (to == ElemType::Bool) {
      if ((v != 0) != (float(v) != 0)) return std::nullopt;
      return make_const(v != 0 ? 1 : 0, to);
    }
    if (is_float(to)) {
      if (!identical(double(float(v)), v)) return std::nullopt;  // rounds in one mode only
      return make_const(v, to);
    }
    int64_t wide = truncate_to_int64(v);
    if (wide != truncate_to_int64(double(float(v)))) return std::nullopt;
    return make_const(double(wrap_to(to, wide)), to);
  }
  int64_t iv = int_value(a);
  if (to == ElemType::Bool) return make_const(iv != 0 ? 1 : 0, to);
  if (is_float(to)) {
    double d = double(iv);
    if (int64_t(d) != iv || double(float(d)) != d) return std::nullopt;
    return make_const(d, to);
  }
  return make_const(double(wrap_to(to, iv)), to);
}

// ---- structure ----------------------------------------------------------------

// Could evaluating e raise a run-time error (integer division by zero, an
// out-of-bounds unguarded read)? Such subexpressions are never dropped.
bool may_fail(const Expr& e) {
  return any_node(e, [](const Expr& x) {
    return (x->kind == ExprKind::Read && !x->guarded) ||
           (x->kind == ExprKind::Binary && (x->binop == BinOp::Div || x->binop == BinOp::Rem) &&
            !is_float(x->type));
  });
}

bool same_expr(const Expr& a, const Expr& b) {
  if (a == b) return true;
  if (a->kind != b->kind || a->type != b->type || a->args.size() != b->args.size()) return false;
  switch (a->kind) {
    case ExprKind::Const:
      if (!identical(a->value, b->value)) return false;
      break;
    case ExprKind::Index:
      if (a->index != b->index) return false;
      break;
    case ExprKind::Size:
      if (a->size != b->size) return false;
      break;
    case ExprKind::Read:
      if (a->tensor != b->tensor || a->guarded != b->guarded ||
          a->indices.size() != b->indices.size())
        return false;
      for (size_t i = 0; i < a->indices.size(); ++i)
        if (!ir::identical(a->indices[i], b->indices[i]) ||
            a->is_computed(i) != b->is_computed(i) ||
            (a->is_computed(i) && !same_expr(a->computed[i], b->computed[i])))
          return false;
      break;
    case ExprKind::Unary:
      if (a->unop != b->unop) return false;
      break;
    case ExprKind::Binary:
      if (a->binop != b->binop) return false;
      break;
    case ExprKind::Select:
    case ExprKind::Cast:
      break;
  }
  for (size_t i = 0; i < a->args.size(); ++i)
    if (!same_expr(a->args[i], b->args[i])) return false;
  return true;
}

Expr rewrite_binary(const Expr& e) {
  const Expr& a = e->args[0];
  const Expr& b = e->args[1];
  if (is_const(a) && is_const(b))
    if (auto folded = fold_binary(e->binop, a, b)) return *folded;
  ElemType t = a->type;
  if (t == ElemType::Bool) {
    bool is_and = e->binop == BinOp::And, is_or = e->binop == BinOp::Or;
    if ((is_and && bool_const_is(a, true)) || (is_or && bool_const_is(a, false))) return b;
    if ((is_and && bool_const_is(b, true)) || (is_or && bool_const_is(b, false))) return a;
    if ((is_and && bool_const_is(a, false) && !may_fail(b)) ||
        (is_or && bool_const_is(a, true) && !may_fail(b)))
      return a;
    if ((is_and && bool_const_is(b, false) && !may_fail(a)) ||
        (is_or && bool_const_is(b, true) && !may_fail(a)))
      return b;
    return e;
  }
  // x + -0.0 and x - +0.0 are x for every float x; x + +0.0 is not (it turns -0.0
  // into +0.0), so float addition only drops a -0.0.
  const bool fp = is_float(t);
  switch (e->binop) {
    case BinOp::Mul:
      if (const_is(b, 1)) return a;
      if (const_is(a, 1)) return b;
      if (const_is(b, -1)) return make_unary(UnOp::Neg, a);
      if (const_is(a, -1)) return make_unary(UnOp::Neg, b);
      if (!fp && const_is(b, 0) && !may_fail(a)) return b;
      if (!fp && const_is(a, 0) && !may_fail(b)) return a;
      break;
    case BinOp::Div:
      if (const_is(b, 1)) return a;
      break;
    case BinOp::Add:
      if (const_is(b, fp ? -0.0 : 0)) return a;
      if (const_is(a, fp ? -0.0 : 0)) return b;
      break;
    case BinOp::Sub:
      if (const_is(b, 0)) return a;
      break;
    default:
      break;
  }
  return e;
}

// One step of rewriting at the root of e (its arguments are already simplified).
Expr rewrite(const Expr& e) {
  switch (e->kind) {
    case ExprKind::Size:
      if (auto c = e->size.constant()) return make_const(double(*c), ElemType::I64);
      return e;
    case ExprKind::Unary: {
      const Expr& a = e->args[0];
      if (is_const(a))
        if (auto folded = fold_unary(e->unop, a)) return *folded;
      bool self_inverse = e->unop == UnOp::Neg || e->unop == UnOp::Not;
      if (self_inverse && a->kind == ExprKind::Unary && a->unop == e->unop) return a->args[0];
      return e;
    }
    case ExprKind::Binary:
      return rewrite_binary(e);
    case ExprKind::Select: {
      const Expr& c = e->args[0];
      if (is_const(c)) return c->value != 0 ? e->args[1] : e->args[2];
      if (same_expr(e->args[1], e->args[2]) && !may_fail(c)) return e->args[1];
      if (c->kind == ExprKind::Unary && c->unop == UnOp::Not)
        return make_select(c->args[0], e->args[2], e->args[1]);
      return e;
    }
    case ExprKind::Cast:
      if (is_const(e->args[0]))
        if (auto folded = fold_cast(e->args[0], e->type)) return *folded;
      return e;
    default:
      return e;
  }
}

void simplify_block(std::vector<Stmt>& body) {
  for (Stmt& s : body) {
    if (s.kind == StmtKind::Compute)
      s.compute.body = simplify_expr(s.compute.body);
    else
      simplify_block(s.loop->body);
  }
}

}  // namespace

namespace {

/// Simplifies the operands, then applies the rules to the node until none applies.
class Simplifier : public ExprMutator {
 public:
  Expr mutate(const Expr& e) override {
    Expr current = ExprMutator::mutate(e);
    // Each rule makes the tree smaller or (select(not c, ...)) removes a not, so this stops.
    for (;;) {
      Expr next = rewrite(current);
      if (next == current) return current;
      current = next;
    }
  }
};

}  // namespace

Expr simplify_expr(const Expr& e) {
  return Simplifier().mutate(e);
}

void simplify(Function& fn) {
  simplify_block(fn.body);
}

}  // namespace tenet::passes
