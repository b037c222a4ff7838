// The derivative table. Each rule is the chain rule for one operation: given
// d = d(loss)/d(n), the adjoint of each operand. Rules reuse `self` (the
// node's value) where the derivative is a function of it: exp, sqrt, tanh,
// sigmoid, div, pow. Non-differentiable points follow one fixed convention,
// documented per rule: fmax/fmin route a tie to the first operand, abs has
// derivative 0 at 0 (as PyTorch's sgn). Piecewise-constant operations
// (floor, ceil, round, trunc, rint, sign, the sign operand of copysign, the
// direction of nextafter) carry no gradient: their derivative is 0 wherever
// it exists, as in PyTorch. nextafter(a, b) moves a by one ulp: derivative 1
// in a, as the identity's. stop_gradient(a) is a constant to AD.
#include "ad/rules.h"

#include "ad/expr_util.h"
#include "ir/builder.h"
#include "support/error.h"

namespace tenet::ad {

using ir::BinOp;
using ir::Expr;
using ir::ExprKind;
using ir::UnOp;

bool piecewise_constant(UnOp op) {
  return op == UnOp::Floor || op == UnOp::Ceil || op == UnOp::Round || op == UnOp::Trunc ||
         op == UnOp::Rint || op == UnOp::Sign;
}

bool carries_gradient(const Expr& n, size_t i) {
  if (!is_float(n->type) || i >= n->args.size() || !is_float(n->args[i]->type)) return false;
  switch (n->kind) {
    case ExprKind::Unary:
      // stop_gradient: the value is its operand's, the gradient none (detach).
      return n->unop != UnOp::Not && n->unop != UnOp::StopGradient && !piecewise_constant(n->unop);
    case ExprKind::Binary:
      if (n->binop == BinOp::Nextafter || n->binop == BinOp::Copysign)
        return i == 0;  // not through the direction or the sign
      return !is_comparison(n->binop) && !is_logical(n->binop);
    case ExprKind::Select:
      return i > 0;  // never through the condition
    case ExprKind::Cast:
      return true;  // float to float
    default:
      return false;  // leaves
  }
}

namespace {

Expr zero(const Expr& like) {
  return constant(0, like->type);
}
Expr one(const Expr& like) {
  return constant(1, like->type);
}
Expr k(double value, const Expr& like) {
  return constant(value, like->type);
}
Expr un(UnOp op, const Expr& a) {
  return ir::make_unary(op, a);
}

// d(n)/d(operand) for unary operations, times d.
Expr unary_rule(UnOp op, const Expr& a, const Expr& self, const Expr& d) {
  switch (op) {
    case UnOp::Neg:
      return neg(d);  // -a
    case UnOp::Exp:
      return mul(d, self);  // exp(a)
    case UnOp::Log:
      return div(d, a);  // 1/a
    case UnOp::Sqrt:
      return div(d, mul(constant(2, a->type), self));  // 1/(2 sqrt a)
    case UnOp::Tanh:
      return mul(d, sub(one(a), mul(self, self)));  // 1 - tanh^2
    case UnOp::Sigmoid:
      return mul(d, mul(self, sub(one(a), self)));  // s (1 - s)
    case UnOp::Abs:                                 // sgn(a), 0 at 0
      return select(ir::make_binary(BinOp::Gt, a, zero(a)), d,
                    select(ir::make_binary(BinOp::Lt, a, zero(a)), neg(d), zero(a)));
    case UnOp::Rsqrt:  // -1/2 a^(-3/2) = -self^3 / 2
      return mul(d, mul(k(-0.5, a), mul(self, mul(self, self))));
    case UnOp::Exp2:  // 2^a ln 2
      return mul(d, mul(self, k(0.6931471805599453, a)));
    case UnOp::Log2:  // 1 / (a ln 2)
      return div(d, mul(a, k(0.6931471805599453, a)));
    case UnOp::Log10:  // 1 / (a ln 10)
      return div(d, mul(a, k(2.302585092994046, a)));
    case UnOp::Log1p:  // 1 / (1 + a)
      return div(d, add(one(a), a));
    case UnOp::Expm1:  // exp(a) = self + 1
      return mul(d, add(self, one(a)));
    case UnOp::Sin:
      return mul(d, un(UnOp::Cos, a));
    case UnOp::Cos:
      return neg(mul(d, un(UnOp::Sin, a)));
    case UnOp::Tan:  // 1 + tan^2
      return mul(d, add(one(a), mul(self, self)));
    case UnOp::Asin:  // 1 / sqrt(1 - a^2)
      return div(d, un(UnOp::Sqrt, sub(one(a), mul(a, a))));
    case UnOp::Acos:  // -1 / sqrt(1 - a^2)
      return neg(div(d, un(UnOp::Sqrt, sub(one(a), mul(a, a)))));
    case UnOp::Atan:  // 1 / (1 + a^2)
      return div(d, add(one(a), mul(a, a)));
    case UnOp::Sinh:
      return mul(d, un(UnOp::Cosh, a));
    case UnOp::Cosh:
      return mul(d, un(UnOp::Sinh, a));
    case UnOp::Erf:  // 2 / sqrt(pi) exp(-a^2)
      return mul(d, mul(k(1.1283791670955126, a), un(UnOp::Exp, neg(mul(a, a)))));
    case UnOp::Erfc:
      return neg(mul(d, mul(k(1.1283791670955126, a), un(UnOp::Exp, neg(mul(a, a))))));
    case UnOp::Cbrt:  // 1 / (3 cbrt(a)^2)
      return div(d, mul(k(3, a), mul(self, self)));
    case UnOp::Floor:
    case UnOp::Ceil:
    case UnOp::Round:
    case UnOp::Trunc:
    case UnOp::Rint:
    case UnOp::Sign:
    case UnOp::StopGradient:
    case UnOp::Not:
      break;
  }
  TENET_UNREACHABLE("no derivative for this unary operation");
}

// {d(n)/da, d(n)/db}, times d.
std::vector<Expr> binary_rule(BinOp op, const Expr& a, const Expr& b, const Expr& self,
                              const Expr& d) {
  switch (op) {
    case BinOp::Add:
      return {d, d};
    case BinOp::Sub:
      return {d, neg(d)};
    case BinOp::Mul:
      return {mul(d, b), mul(d, a)};
    case BinOp::Div:
      return {div(d, b), neg(div(mul(d, self), b))};  // a/b: 1/b, -(a/b)/b
    case BinOp::Pow:                                  // b a^(b-1), a^b log a
      return {mul(d, mul(b, pow(a, sub(b, one(b))))),
              mul(d, mul(self, ir::make_unary(UnOp::Log, a)))};
    case BinOp::Max: {  // a tie goes to a
      Expr a_wins = ir::make_binary(BinOp::Ge, a, b);
      return {select(a_wins, d, zero(d)), select(a_wins, zero(d), d)};
    }
    case BinOp::Min: {  // a tie goes to a
      Expr a_wins = ir::make_binary(BinOp::Le, a, b);
      return {select(a_wins, d, zero(d)), select(a_wins, zero(d), d)};
    }
    case BinOp::Atan2: {  // atan2(a, b): b / (a^2 + b^2), -a / (a^2 + b^2)
      Expr r2 = add(mul(a, a), mul(b, b));
      return {div(mul(d, b), r2), neg(div(mul(d, a), r2))};
    }
    case BinOp::Hypot:  // a / hypot, b / hypot
      return {div(mul(d, a), self), div(mul(d, b), self)};
    case BinOp::Copysign: {  // |a| sgn(b): sgn(a) sgn(b) (as copysign(1, a) copysign(1, b))
      Expr sign_a = ir::make_binary(BinOp::Copysign, one(a), a);
      Expr sign_b = ir::make_binary(BinOp::Copysign, one(b), b);
      return {mul(d, mul(sign_a, sign_b)), nullptr};
    }
    case BinOp::Nextafter:
      return {d, nullptr};
    default:
      break;  // comparisons and logic carry no gradient; rem (integers) neither
  }
  TENET_UNREACHABLE("no derivative for this binary operation");
}

}  // namespace

std::vector<Expr> operand_adjoints(const Expr& n, const Expr& self, const Expr& d) {
  std::vector<Expr> out(n->args.size());
  bool any = false;
  for (size_t i = 0; i < n->args.size(); ++i) any = any || carries_gradient(n, i);
  if (!any) return out;
  switch (n->kind) {
    case ExprKind::Unary:
      out[0] = unary_rule(n->unop, n->args[0], self, d);
      break;
    case ExprKind::Binary:
      out = binary_rule(n->binop, n->args[0], n->args[1], self, d);
      break;
    case ExprKind::Select:  // select(c, a, b): the taken branch gets d
      out = {nullptr, select(n->args[0], d, zero(d)), select(n->args[0], zero(d), d)};
      break;
    case ExprKind::Cast:
      out[0] = ir::make_cast(d, n->args[0]->type);
      break;
    default:
      TENET_UNREACHABLE("a leaf has no operands");
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (!carries_gradient(n, i)) out[i] = nullptr;
  return out;
}

}  // namespace tenet::ad
