#include "codegen/cpp_expr.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "ir/affine.h"
#include "ir/mutator.h"
#include "ir/printer.h"
#include "lower/index_range.h"
#include "support/error.h"

namespace tenet::codegen::detail {

namespace {

std::string c_type(ElemType t) {
  return std::string(c_type_name(t));
}

/// C++ promotes int8/uint8/int16 operands to int; the IR keeps the operand
/// type, so results of arithmetic on them are cast back.
bool promotes_to_int(ElemType t) {
  return t == ElemType::I8 || t == ElemType::U8 || t == ElemType::I16 || t == ElemType::U16;
}

CExpr call(const std::string& fn, const std::vector<CExpr>& args) {
  std::string text = fn + "(";
  for (size_t i = 0; i < args.size(); ++i) text += (i ? ", " : "") + args[i].text;
  return CExpr{text + ")", kPrecPrimary};
}

/// Keeps an integer result in its IR type when C++ would have widened it.
CExpr keep_type(CExpr e, ElemType t) {
  if (!promotes_to_int(t)) return e;
  return CExpr{c_type(t) + "(" + e.text + ")", kPrecPrimary};
}

CExpr infix(const CExpr& a, const char* op, const CExpr& b, int prec) {
  // Left-associative: the right operand needs a strictly tighter operator.
  // Chained comparisons and '&&' inside '||' get parentheses, as a reader
  // (and -Wparentheses) expects.
  int left = prec, right = prec + 1;
  if (prec == kPrecRelational || prec == kPrecEquality) left = kPrecRelational + 1;
  if (prec == kPrecEquality) right = kPrecRelational + 1;
  auto operand = [&](const CExpr& x, int min_prec) {
    if (prec == kPrecOr && x.prec == kPrecAnd) return "(" + x.text + ")";
    return wrap(x, min_prec);
  };
  return CExpr{operand(a, left) + " " + op + " " + operand(b, right), prec};
}

CExpr unary(const ir::ExprNode& e, const CExpr& a) {
  const ElemType t = e.type;
  switch (e.unop) {
    case ir::UnOp::Neg: {
      // "-(-x)" rather than "--x".
      std::string operand = a.text[0] == '-' ? "(" + a.text + ")" : wrap(a, kPrecUnary);
      return keep_type(CExpr{"-" + operand, kPrecUnary}, t);
    }
    case ir::UnOp::Not:
      return CExpr{"!" + wrap(a, kPrecUnary), kPrecUnary};
    // float32 (and float16, computed in float32): vectorisable versions with
    // the same bits in vector and scalar code (runtime/tenet_vmath.h).
    case ir::UnOp::Exp:
      return call(t == ElemType::F64 ? "std::exp" : "tenet::math::exp", {a});
    case ir::UnOp::Log:
      return call(t == ElemType::F64 ? "std::log" : "tenet::math::log", {a});
    case ir::UnOp::Sqrt:
      return call("std::sqrt", {a});
    case ir::UnOp::Tanh:
      return call(t == ElemType::F64 ? "std::tanh" : "tenet::math::tanh", {a});
    case ir::UnOp::Erf:
      return call(t == ElemType::F64 ? "std::erf" : "tenet::math::erf", {a});
    case ir::UnOp::Sigmoid:
      return call("tenet::sigmoid", {a});
    case ir::UnOp::Abs:
      if (is_float(t)) return call("std::fabs", {a});
      return call("tenet::int_abs<" + c_type(t) + ">", {a});
    case ir::UnOp::Rsqrt:
      return call("tenet::rsqrt", {a});
    case ir::UnOp::Sign:
      return call("tenet::sign", {a});
    case ir::UnOp::StopGradient:
      return a;  // only AD tells it from its operand
    case ir::UnOp::Floor:
    case ir::UnOp::Ceil:
    case ir::UnOp::Round:
    case ir::UnOp::Trunc:
    case ir::UnOp::Rint:
    case ir::UnOp::Exp2:
    case ir::UnOp::Log2:
    case ir::UnOp::Log10:
    case ir::UnOp::Log1p:
    case ir::UnOp::Expm1:
    case ir::UnOp::Sin:
    case ir::UnOp::Cos:
    case ir::UnOp::Tan:
    case ir::UnOp::Asin:
    case ir::UnOp::Acos:
    case ir::UnOp::Atan:
    case ir::UnOp::Sinh:
    case ir::UnOp::Cosh:
    case ir::UnOp::Erfc:
    case ir::UnOp::Cbrt:
      return call(std::string("std::") + ir::op_name(e.unop), {a});  // the <cmath> name
  }
  TENET_UNREACHABLE("unknown unary op");
}

CExpr binary(const ir::ExprNode& e, const CExpr& a, const CExpr& b) {
  const ElemType t = e.args[0]->type;  // operand type (comparisons give bool)
  switch (e.binop) {
    case ir::BinOp::Add:
      return keep_type(infix(a, "+", b, kPrecAdditive), t);
    case ir::BinOp::Sub:
      return keep_type(infix(a, "-", b, kPrecAdditive), t);
    case ir::BinOp::Mul:
      return keep_type(infix(a, "*", b, kPrecMultiplicative), t);
    case ir::BinOp::Div:
      if (is_float(t)) return infix(a, "/", b, kPrecMultiplicative);
      return call("tenet::int_div<" + c_type(t) + ">", {a, b});
    case ir::BinOp::Pow:
    case ir::BinOp::Atan2:
    case ir::BinOp::Hypot:
    case ir::BinOp::Copysign:
    case ir::BinOp::Nextafter:
      return call(std::string("std::") + ir::op_name(e.binop), {a, b});  // the <cmath> name
    case ir::BinOp::Rem:
      return call("tenet::int_rem<" + c_type(t) + ">", {a, b});
    case ir::BinOp::Max:
      return is_float(t) ? call("tenet::math::max", {a, b})
                         : call("std::max<" + c_type(t) + ">", {a, b});
    case ir::BinOp::Min:
      return is_float(t) ? call("tenet::math::min", {a, b})
                         : call("std::min<" + c_type(t) + ">", {a, b});
    case ir::BinOp::Lt:
      return infix(a, "<", b, kPrecRelational);
    case ir::BinOp::Le:
      return infix(a, "<=", b, kPrecRelational);
    case ir::BinOp::Gt:
      return infix(a, ">", b, kPrecRelational);
    case ir::BinOp::Ge:
      return infix(a, ">=", b, kPrecRelational);
    case ir::BinOp::Eq:
      return infix(a, "==", b, kPrecEquality);
    case ir::BinOp::Ne:
      return infix(a, "!=", b, kPrecEquality);
    case ir::BinOp::And:
      return infix(a, "&&", b, kPrecAnd);
    case ir::BinOp::Or:
      return infix(a, "||", b, kPrecOr);
  }
  TENET_UNREACHABLE("unknown binary op");
}

CExpr cast(const CExpr& a, ElemType from, ElemType to) {
  // float16 values convert through float32 (runtime/tenet_runtime.h).
  if (from == ElemType::F16) return cast(half_to_float(a), ElemType::F32, to);
  if (to == ElemType::F16) return call("tenet::float_to_half", {cast(a, from, ElemType::F32)});
  if (to == ElemType::Bool) return CExpr{wrap(a, kPrecEquality + 1) + " != 0", kPrecEquality};
  if (is_float(from) && is_int(to)) return call("tenet::float_to_int<" + c_type(to) + ">", {a});
  return CExpr{c_type(to) + "(" + a.text + ")", kPrecPrimary};
}

/// Whether lo <= a < hi holds for every value the indices of `a` take.
bool provably_in_range(const ir::Affine& a, const ir::SizeExpr& extent, const Scope& scope) {
  ir::SizeExpr min = a.offset, max = a.offset;
  for (const auto& [index, coef] : a.terms) {
    const IndexInfo& range = scope.indices.at(index);
    ir::SizeExpr first = range.lo, last = range.hi - 1;
    min = min + (coef > 0 ? first : last) * coef;
    max = max + (coef > 0 ? last : first) * coef;
  }
  return ir::provably_le(0, min) && ir::provably_le(max, extent - 1);
}

bool computed_in_range(const ir::Expr& index, const ir::SizeExpr& extent, const Scope& scope) {
  lower::IndexRanges ranges;
  for (const auto& [name, info] : scope.indices) ranges[name] = lower::IndexRange{info.lo, info.hi};
  return lower::provably_in_extent(index, extent, ranges);
}

/// Whether computed index `d` of `e` is checked at run time.
bool checks_computed(const ir::ExprNode& e, size_t d, const Scope& scope) {
  return scope.check_indices && !computed_in_range(e.computed[d], e.tensor->shape[d], scope);
}

/// The arguments naming computed index `d` of `e` in a run-time message:
/// ", tenet::IndexSite{...}" and the values of the indices in scope.
std::string index_site(const ir::ExprNode& e, size_t d, const Scope& scope) {
  std::vector<std::pair<int, std::string>> in_scope;  // (order, IR name)
  for (const auto& [name, info] : scope.indices) in_scope.push_back({info.order, name});
  std::sort(in_scope.begin(), in_scope.end());
  std::string names, values;
  for (const auto& [order, name] : in_scope) {
    if (name.find(' ') != std::string::npos) continue;  // not an IR index (a window)
    names += (names.empty() ? "" : ", ") + name;
    auto first = scope.not_open.find(name);
    values += ", " + (first != scope.not_open.end() ? first->second : scope.indices.at(name).name);
  }
  return ", tenet::IndexSite{" + c_string_literal(ir::index_text(e.computed[d])) + ", " +
         c_string_literal(ir::read_text(e)) + ", " + c_string_literal(e.tensor->name) + ", " +
         std::to_string(d) + ", " + c_string_literal(scope.statement) + ", " +
         c_string_literal(names) + "}" + values;
}

/// Computed index `d` of `e`'s value as C++: where it is checked, its int64
/// arithmetic is exact or a recorded fault (Scope::index_site).
CExpr computed_value(const ir::ExprNode& e, size_t d, const Scope& scope) {
  if (!checks_computed(e, d, scope)) return emit_expr(e.computed[d], scope);
  Scope inner = scope;
  inner.index_site = index_site(e, d, scope);
  return emit_expr(e.computed[d], inner);
}

/// A computed index as C++: checked at run time unless that is off or proven needless.
CExpr computed_index(const ir::ExprNode& e, size_t d, const TensorAccess& t, const Scope& scope) {
  if (auto it = scope.hoisted.find({&e, d}); it != scope.hoisted.end())
    return CExpr{it->second, kPrecPrimary};
  CExpr value = computed_value(e, d, scope);
  if (e.guarded || !checks_computed(e, d, scope)) return value;
  return CExpr{"tenet::checked_index(" + value.text + ", " + t.dims[d] + ", " + kIndexFault +
                   index_site(e, d, scope) + ")",
               kPrecPrimary};
}

/// One step of a checked computed index's int64 arithmetic (Scope::index_site).
CExpr index_step(char op, const CExpr& a, const CExpr& b, const Scope& scope) {
  return CExpr{"tenet::index_step<'" + std::string(1, op) + "'>(" + a.text + ", " + b.text + ", " +
                   kIndexFault + scope.index_site + ")",
               kPrecPrimary};
}

/// A bound on |e|: a constant, an integer of at most 32 bits widened, an
/// index whose loop starts at a constant of at most 32 bits (counting from
/// there past 2^62 would take a century), and sums and products of those;
/// nullopt otherwise.
std::optional<double> magnitude_bound(const ir::Expr& e, const Scope& scope) {
  if (e->kind == ir::ExprKind::Const) return std::fabs(e->value);
  if (e->kind == ir::ExprKind::Index) {
    auto it = scope.indices.find(e->index);
    const std::optional<int64_t> lo =
        it == scope.indices.end() ? std::nullopt : it->second.lo.constant();
    if (lo && *lo >= -(int64_t(1) << 31) && *lo <= (int64_t(1) << 31)) return 4.6116860e18;
    return std::nullopt;
  }
  if (e->kind == ir::ExprKind::Cast &&
      (e->args[0]->type == ElemType::Bool ||
       (is_int(e->args[0]->type) && byte_size(e->args[0]->type) <= 4)))
    return 4294967296.0;
  if (e->kind != ir::ExprKind::Binary || e->args[0]->type != ElemType::I64) return std::nullopt;
  const auto a = magnitude_bound(e->args[0], scope), b = magnitude_bound(e->args[1], scope);
  if (!a || !b) return std::nullopt;
  if (e->binop == ir::BinOp::Add || e->binop == ir::BinOp::Sub) return *a + *b;
  if (e->binop == ir::BinOp::Mul) return *a * *b;
  return std::nullopt;
}

/// The operator index_step checks for an int64 operation, or 0 where it
/// cannot fail (a division by a constant other than 0 and -1; a sum or
/// product bounded well inside int64 by magnitude_bound).
char checked_step(const ir::Expr& e, const Scope& scope) {
  const char op = ir::index_step_op(*e);
  if (op == '/' || op == '%') {
    const ir::Expr& divisor = e->args[1];
    const bool safe =
        divisor->kind == ir::ExprKind::Const && divisor->value != 0 && divisor->value != -1;
    return safe ? 0 : op;
  }
  if (op == '~') return op;
  const auto bound = op ? magnitude_bound(e, scope) : std::nullopt;
  return bound && *bound < 9.0e18 ? 0 : op;
}

/// Whether `select` is printed as tenet::select (runtime/tenet_runtime.h),
/// which evaluates both branches and branches on nothing, so that its loop
/// vectorises without GCC's if-conversion (off in the JIT: codegen/jit.cpp).
/// That needs a number type (float16 and bool keep `?:`) and branches that
/// are safe to evaluate where they are not taken: every plain read in bounds
/// for all values of the indices in scope (a branch's read need not be in
/// bounds where the branch is not taken: docs/language.md) and no computed
/// index (its run-time check would report a read the program never makes).
/// The value is the one `?:` gives, bit for bit.
/// The plain reads `e` makes whatever values it meets (those of a select's
/// condition, not of its branches), each a read that is in bounds wherever
/// `e` is evaluated.
void unconditional_reads(const ir::Expr& e, std::vector<const ir::ExprNode*>& out) {
  if (e->kind == ir::ExprKind::Read && !e->has_computed_index() && !e->guarded)
    out.push_back(e.get());
  if (e->kind == ir::ExprKind::Select) return unconditional_reads(e->args[0], out);
  for (const ir::Expr& a : e->args) unconditional_reads(a, out);
}

bool same_element(const ir::ExprNode& a, const ir::ExprNode& b) {
  if (a.tensor != b.tensor || a.indices.size() != b.indices.size()) return false;
  for (size_t d = 0; d < a.indices.size(); ++d)
    if (!ir::equal(a.indices[d], b.indices[d])) return false;
  return true;
}

/// Whether `e` is safe to evaluate where the program would not: no read
/// that may be out of bounds (but of an element `evaluated` reads, which is
/// evaluated either way), no computed index, no integer division.
bool safe_anywhere(const ir::Expr& e, const ir::Expr& evaluated, const Scope& scope) {
  // A read of an element `evaluated` reads too is in bounds: ELU's
  // select(x > 0, x, exp(x) - 1).
  std::vector<const ir::ExprNode*> known;
  unconditional_reads(evaluated, known);
  auto unsafe = [&](const ir::Expr& x) {
    if (x->kind == ir::ExprKind::Binary && !is_float(x->type) &&
        (x->binop == ir::BinOp::Div || x->binop == ir::BinOp::Rem))
      return true;
    if (x->kind != ir::ExprKind::Read) return false;
    if (x->has_computed_index()) return true;
    if (x->guarded) return false;  // checks its own bounds
    for (const ir::ExprNode* r : known)
      if (same_element(*x, *r)) return false;
    for (size_t d = 0; d < x->indices.size(); ++d) {
      for (const auto& term : x->indices[d].terms)
        if (!scope.indices.count(term.first)) return true;
      if (!provably_in_range(x->indices[d], x->tensor->shape[d], scope)) return true;
    }
    return false;
  };
  return !ir::any_node(e, unsafe);
}

bool blends(const ir::ExprNode& select, const Scope& scope) {
  const ElemType t = select.type;
  if (t == ElemType::Bool || t == ElemType::F16) return false;
  if (!scope.index_site.empty()) return false;  // a branch not taken must not record a fault
  return safe_anywhere(select.args[1], select.args[0], scope) &&
         safe_anywhere(select.args[2], select.args[0], scope);
}

/// Whether `a && b` (or `a || b`) is printed as `(a) & (b)`: both evaluated,
/// no branch, so that its loop vectorises (ReLU6's `x > 0 && x < 6`), when
/// evaluating b where `&&` would not is safe. The value is the same.
bool eager_logic(const ir::ExprNode& e, const Scope& scope) {
  return scope.index_site.empty() && safe_anywhere(e.args[1], e.args[0], scope);
}

}  // namespace

CExpr computed_index_to_c(const ir::ExprNode& read, size_t d, const Scope& scope) {
  auto it = scope.tensors->find(read.tensor.get());
  TENET_ASSERT(it != scope.tensors->end(), "read of " << read.tensor->name << " has no storage");
  return computed_index(read, d, it->second, scope);
}

namespace {

CExpr read(const ir::ExprNode& e, const Scope& scope) {
  auto it = scope.tensors->find(e.tensor.get());
  TENET_ASSERT(it != scope.tensors->end(), "read of " << e.tensor->name << " has no storage");
  const TensorAccess& t = it->second;
  std::vector<CExpr> at;
  for (size_t d = 0; d < e.indices.size(); ++d)
    at.push_back(e.is_computed(d) ? computed_index(e, d, t, scope)
                                  : affine_to_c(e.indices[d], scope));
  CExpr element{t.pointer + "[" + flat_offset(t, at) + "]", kPrecPrimary};
  if (e.tensor->type == ElemType::F16) element = half_to_float(element);
  if (!e.guarded) return element;
  std::string condition;
  for (size_t d = 0; d < e.indices.size(); ++d) {
    if (e.is_computed(d) ? computed_in_range(e.computed[d], e.tensor->shape[d], scope)
                         : provably_in_range(e.indices[d], e.tensor->shape[d], scope))
      continue;
    if (!condition.empty()) condition += " && ";
    const CExpr index =
        e.is_computed(d) ? computed_value(e, d, scope) : affine_to_c(e.indices[d], scope);
    condition += "tenet::in_bounds(" + index.text + ", " + t.dims[d] + ")";
  }
  if (condition.empty()) return element;
  return CExpr{condition + " ? " + element.text + " : " + literal(0, e.type).text, kPrecTernary};
}

}  // namespace

CExpr half_to_float(const CExpr& bits) {
  return call("tenet::half_to_float", {bits});
}

std::string stored(ElemType t, const std::string& value) {
  return t == ElemType::F16 ? "tenet::float_to_half(" + value + ")" : value;
}

CExpr affine_to_c(const ir::Affine& a, const Scope& scope) {
  std::string text;
  int prec = kPrecPrimary;
  int terms = 0;
  for (const auto& [index, coef] : a.terms) {
    auto it = scope.indices.find(index);
    TENET_ASSERT(it != scope.indices.end(), "index " << index << " is not in scope");
    const std::string& name = it->second.name;
    int64_t mag = coef < 0 ? -coef : coef;
    std::string term = mag == 1 ? name : std::to_string(mag) + " * " + name;
    if (terms == 0)
      text = (coef < 0 ? "-" : "") + term;
    else
      text += (coef < 0 ? " - " : " + ") + term;
    prec = terms > 0  ? kPrecAdditive
           : coef < 0 ? kPrecUnary
           : mag == 1 ? kPrecPrimary
                      : kPrecMultiplicative;
    ++terms;
  }
  if (a.offset == ir::SizeExpr(0)) {
    if (terms == 0) return CExpr{"0", kPrecPrimary};
    return CExpr{text, prec};
  }
  CExpr offset = size_to_c(a.offset, *scope.size_names);
  if (terms == 0) return offset;
  if (offset.text[0] == '-')
    text += " - " + offset.text.substr(1);  // "-N + 3" -> "i - N + 3"
  else
    text += " + " + wrap(offset, kPrecAdditive);
  return CExpr{text, kPrecAdditive};
}

std::string flat_offset(const TensorAccess& t, const std::vector<ir::Affine>& indices,
                        const Scope& scope) {
  std::vector<CExpr> at;
  for (const ir::Affine& a : indices) at.push_back(affine_to_c(a, scope));
  return flat_offset(t, at);
}

std::string flat_offset(const TensorAccess& t, const std::vector<CExpr>& indices) {
  std::string text;
  for (size_t d = 0; d < indices.size(); ++d) {
    const CExpr& index = indices[d];
    if (index.text == "0" || t.strides[d] == "0") continue;  // (a row-local row's shared dims)
    // Parenthesised so each dimension's index stands out: "(2 * i + ki) * x_stride2 + (2 * j +
    // kj)".
    std::string term = t.strides[d] == "1"
                           ? (indices.size() > 1 ? wrap(index, kPrecPrimary) : index.text)
                           : wrap(index, kPrecMultiplicative) + " * " + t.strides[d];
    text += (text.empty() ? "" : " + ") + term;
  }
  return text.empty() ? "0" : text;
}

CExpr emit_expr(const ir::Expr& e, const Scope& scope) {
  if (auto hoisted = scope.hoisted_values.find(e.get()); hoisted != scope.hoisted_values.end())
    return CExpr{hoisted->second, kPrecPrimary};
  switch (e->kind) {
    case ir::ExprKind::Const:
      return literal(e->value, e->type);
    case ir::ExprKind::Index: {
      auto it = scope.indices.find(e->index);
      TENET_ASSERT(it != scope.indices.end(), "index " << e->index << " is not in scope");
      return CExpr{it->second.name, kPrecPrimary};
    }
    case ir::ExprKind::Size:
      return size_to_c(e->size, *scope.size_names);
    case ir::ExprKind::Read:
      return read(*e, scope);
    case ir::ExprKind::Unary:
      if (!scope.index_site.empty() && checked_step(e, scope))
        return index_step('~', emit_expr(e->args[0], scope), CExpr{"0", kPrecPrimary}, scope);
      return unary(*e, emit_expr(e->args[0], scope));
    case ir::ExprKind::Binary:
      if (const char op = scope.index_site.empty() ? 0 : checked_step(e, scope))
        return index_step(op, emit_expr(e->args[0], scope), emit_expr(e->args[1], scope), scope);
      if ((e->binop == ir::BinOp::And || e->binop == ir::BinOp::Or) && eager_logic(*e, scope))
        return CExpr{wrap(emit_expr(e->args[0], scope), kPrecPrimary) +
                         (e->binop == ir::BinOp::And ? " & " : " | ") +
                         wrap(emit_expr(e->args[1], scope), kPrecPrimary),
                     e->binop == ir::BinOp::And ? kPrecBitAnd : kPrecBitOr};
      return binary(*e, emit_expr(e->args[0], scope), emit_expr(e->args[1], scope));
    case ir::ExprKind::Select: {
      CExpr c = emit_expr(e->args[0], scope);
      CExpr a = emit_expr(e->args[1], scope);
      CExpr b = emit_expr(e->args[2], scope);
      if (blends(*e, scope))
        return CExpr{"tenet::select<" + c_type(e->type) + ">(" + c.text + ", " + a.text + ", " +
                         b.text + ")",
                     kPrecPrimary};
      return CExpr{
          wrap(c, kPrecOr) + " ? " + wrap(a, kPrecTernary + 1) + " : " + wrap(b, kPrecTernary + 1),
          kPrecTernary};
    }
    case ir::ExprKind::Cast:
      return cast(emit_expr(e->args[0], scope), e->args[0]->type, e->type);
  }
  TENET_UNREACHABLE("unknown expression kind");
}

std::string reduce_identity(ir::ReduceOp op, ElemType t) {
  switch (op) {
    case ir::ReduceOp::Sum:
      return literal(0, t).text;
    case ir::ReduceOp::Max:
      return "tenet::max_identity<" + c_type(t) + ">()";
    case ir::ReduceOp::Min:
      return "tenet::min_identity<" + c_type(t) + ">()";
    case ir::ReduceOp::Prod:
      return literal(1, t).text;
    case ir::ReduceOp::None:
      break;
  }
  TENET_UNREACHABLE("assignment has no identity");
}

std::string reduce_step(ir::ReduceOp op, ElemType t, const std::string& acc, const CExpr& value) {
  switch (op) {
    case ir::ReduceOp::Sum:
      return acc + " += " + value.text + ";";
    case ir::ReduceOp::Max:
      return acc + " = " + (is_float(t) ? "tenet::math::max(" : "std::max<" + c_type(t) + ">(") +
             acc + ", " + value.text + ");";
    case ir::ReduceOp::Min:
      return acc + " = " + (is_float(t) ? "tenet::math::min(" : "std::min<" + c_type(t) + ">(") +
             acc + ", " + value.text + ");";
    case ir::ReduceOp::Prod:
      return acc + " *= " + value.text + ";";
    case ir::ReduceOp::None:
      break;
  }
  TENET_UNREACHABLE("assignment is not a reduction");
}

}  // namespace tenet::codegen::detail
