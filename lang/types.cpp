// Types of right sides, in two passes. infer() resolves every name, records
// every read (for range inference) and computes each node's type, reporting
// type errors; number literals stay untyped until the other operand (or the
// statement) gives them a type. emit() then builds the ir::Expr with every
// literal typed and every narrower integer operand cast to the wider type.
#include <cmath>

#include "ir/affine.h"
#include "ir/builder.h"
#include "ir/builtins.h"
#include "lang/check_internal.h"
#include "support/error.h"

namespace tenet::lang::detail {

namespace {

ElemType signed_int_of_size(int bytes) {
  return bytes <= 1   ? ElemType::I8
         : bytes == 2 ? ElemType::I16
         : bytes == 4 ? ElemType::I32
                      : ElemType::I64;
}

// The integer type that holds both (int32 and int64 give int64; uint8 and
// int8 int16, uint32 and int32 int64); uint64 and a signed type give uint64
// (no type holds both: C++'s choice, wrapping negative values).
ElemType wider_int(ElemType a, ElemType b) {
  if (a == b) return a;
  if (is_unsigned(a) == is_unsigned(b)) return byte_size(a) >= byte_size(b) ? a : b;
  const ElemType s = is_unsigned(a) ? b : a, u = is_unsigned(a) ? a : b;
  if (byte_size(s) > byte_size(u)) return s;
  if (u == ElemType::U64) return u;
  return signed_int_of_size(2 * byte_size(u));
}

// float16 values are computed in float32: a cast `float16(x)` has type
// float16 (it may define a float16 tensor), anything computed from it float32.
Ty computed(Ty t) {
  return t.is(ElemType::F16) ? Ty::concrete(ElemType::F32) : t;
}

std::string type_word(Ty t) {
  if (t.kind == Ty::Literal) return t.int_ok ? "number" : "float";
  return std::string(type_name(t.type));
}

std::optional<ir::UnOp> unary_builtin(const std::string& name) {
  const ir::Builtin* b = ir::find_builtin(name);
  if (!b || b->kind != ir::BuiltinKind::Unary) return std::nullopt;
  return b->unop;
}

std::optional<ir::BinOp> binary_op(const std::string& op) {
  using B = ir::BinOp;
  static const std::map<std::string, B> ops = {
      {"+", B::Add}, {"-", B::Sub},  {"*", B::Mul}, {"/", B::Div}, {"%", B::Rem},
      {"<", B::Lt},  {"<=", B::Le},  {">", B::Gt},  {">=", B::Ge}, {"==", B::Eq},
      {"!=", B::Ne}, {"&&", B::And}, {"||", B::Or}};
  if (auto it = ops.find(op); it != ops.end()) return it->second;
  // The two-argument builtins, by name (ir/builtins.h).
  const ir::Builtin* b = ir::find_builtin(op);
  if (!b || b->kind != ir::BuiltinKind::Binary) return std::nullopt;
  return b->binop;
}

constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53

/// Why a literal of value `v` cannot have type `t`, or "" when it can. The
/// interpreter and compiled code would otherwise compute with something else
/// than what the program says (inf, 0, a wrapped integer), and not always
/// the same thing: compiled code compares an int8 with 300 as an int.
std::string out_of_range(double v, ElemType t) {
  switch (t) {
    case ElemType::F32: {
      const float f = float(v);
      if (std::isinf(f))
        return "is outside the range of float32 (largest finite value 3.4028235e38)";
      if (f == 0 && v != 0)
        return "is too small for float32: it would round to 0 (the smallest nonzero float32 "
               "is about 1.4e-45)";
      return "";
    }
    case ElemType::F64:
    case ElemType::Bool:
      return "";         // the lexer rejects what float64 cannot hold
    case ElemType::F16:  // literals are float32 operands of the float16 cast
      return "";
    default: {
      // The bounds as text, so no double is converted back to an integer: int64's upper
      // bound as a double is 2^63, which int64 cannot hold. A value is in range when
      // lo <= v < hi_excl, where hi_excl is exact in double (a power of two or small).
      struct Range {
        double lo, hi_excl;
        const char* text;
      };
      const Range r = t == ElemType::U8    ? Range{0, 256.0, "0 to 255"}
                      : t == ElemType::U16 ? Range{0, 65536.0, "0 to 65535"}
                      : t == ElemType::U32 ? Range{0, 4294967296.0, "0 to 4294967295"}
                      : t == ElemType::I8  ? Range{-128, 128.0, "-128 to 127"}
                      : t == ElemType::I16 ? Range{-32768, 32768.0, "-32768 to 32767"}
                      : t == ElemType::I32
                          ? Range{-2147483648.0, 2147483648.0, "-2147483648 to 2147483647"}
                      : is_unsigned(t)  // uint64 literals: what int64 can hold that is >= 0
                          ? Range{0, 9223372036854775808.0, "0 to 9223372036854775807"}
                          : Range{-9223372036854775808.0, 9223372036854775808.0,
                                  "-9223372036854775808 to 9223372036854775807"};
      if (v >= r.lo && v < r.hi_excl && v <= r.hi_excl - 1) return "";  // no fraction above
      return "is outside the range of " + std::string(type_name(t)) + " (" + r.text + ")";
    }
  }
}

/// What a name resolved to (NodeInfo::name), as an expression.
ir::Expr name_expr(const NodeInfo& info, const std::string& name) {
  switch (info.name) {
    case NodeInfo::Name::Index:
      return ir::make_index(info.index);
    case NodeInfo::Name::Loop:
      if (info.loop_lo == 0) return ir::make_index(info.index);
      return ir::make_binary(ir::BinOp::Add, ir::make_index(info.index),
                             ir::make_const(double(info.loop_lo), ElemType::I64));
    case NodeInfo::Name::Size:
      return ir::make_size(info.size);
    case NodeInfo::Name::Tensor:
      return ir::make_read(info.tensor, {});
    case NodeInfo::Name::None:
      break;
  }
  TENET_UNREACHABLE("unresolved name " + name);
}

}  // namespace

ir::Expr Lowerer::emit_number(const ast::Expr& e, ElemType type, bool negated) {
  const double value = negated ? -e.number : e.number;
  if (const std::string problem = out_of_range(value, type); !problem.empty())
    error(e.span, quote((negated ? "-" : "") + text(e.span)) + " " + problem);
  return ir::make_const(e.number, type);
}

Ty Lowerer::infer(const ast::Expr& e, StmtInfo& st) {
  NodeInfo info;
  Ty t = Ty::poison();
  switch (e.kind) {
    case ast::ExprKind::Number:
      t = Ty::literal(e.is_integer && e.number == std::floor(e.number) &&
                      std::fabs(e.number) <= kMaxExactInteger);
      break;
    case ast::ExprKind::Name:
      t = infer_name(e, st, info);
      break;
    case ast::ExprKind::Access:
      t = infer_access(e, st, info);
      break;
    case ast::ExprKind::Builtin:
      t = infer_builtin(e, st, info);
      break;
    case ast::ExprKind::Ternary:
      t = infer_select(e, st);
      break;
    case ast::ExprKind::Binary:
      t = infer_binary(e, st, info);
      break;
    case ast::ExprKind::Unary: {
      if (e.args.size() != 1) break;
      Ty a = infer(*e.args[0], st);
      if (a.kind == Ty::Poison) break;
      bool is_not = e.op == "!";
      if (is_not != a.is(ElemType::Bool)) {
        Diagnostic& d =
            error(e.args[0]->span, std::string("'") + e.op + "' needs " +
                                       (is_not ? "a bool" : "a number") + ", but " +
                                       quote(text(e.args[0]->span)) + " is " + type_word(a));
        if (!is_not)  // -b is C's -1 for true; say what else may be meant
          d.notes.push_back({e.args[0]->span, "write '!" + text(e.args[0]->span) +
                                                  "' for the negation, '-int32(" +
                                                  text(e.args[0]->span) + ")' for -1 and 0"});
        break;
      }
      t = computed(a);
      break;
    }
    case ast::ExprKind::Cast: {
      if (e.args.size() != 1) break;
      Ty a = infer(*e.args[0], st);
      if (a.kind == Ty::Poison) break;
      if (a.kind == Ty::Literal)
        info.operand = e.cast_to == ElemType::F16 ? ElemType::F32
                       : is_float(e.cast_to) || (a.int_ok && e.cast_to != ElemType::Bool)
                           ? e.cast_to
                           : (a.int_ok ? ElemType::I64 : ElemType::F64);
      t = Ty::concrete(e.cast_to);
      break;
    }
  }
  if (t.kind == Ty::Poison) st.poisoned = true;
  info.ty = t;
  st.nodes[&e] = std::move(info);
  return t;
}

Ty Lowerer::infer_name(const ast::Expr& e, StmtInfo& st, NodeInfo& info) {
  if (auto ix = st.index_of.find(e.name); ix != st.index_of.end()) {
    info.name = NodeInfo::Name::Index;
    info.index = st.indices[ix->second].ir_name;
    return Ty::concrete(ElemType::I64);
  }
  if (const LoopVar* l = find_loop(e.name)) {
    info.name = NodeInfo::Name::Loop;
    info.index = l->ir_name;
    info.loop_lo = l->lo;
    return Ty::concrete(ElemType::I64);
  }
  if (const Binding* b = scopes_.find(e.name)) {
    if (b->rank > 0) {
      Diagnostic& d = error(e.span, "rank mismatch: " + quote(e.name) + " has rank " +
                                        std::to_string(b->rank) + " but is indexed with 0 indices");
      d.notes.push_back(
          {b->decl, quote(e.name) + (b->is_input ? " is declared here" : " is defined here")});
      return Ty::poison();
    }
    if (!b->ok()) return Ty::poison();
    info.name = NodeInfo::Name::Tensor;
    info.tensor = b->value;
    return Ty::concrete(b->value->type);
  }
  if (auto s = env_.sizes.find(e.name); s != env_.sizes.end()) {
    info.name = NodeInfo::Name::Size;
    info.size = s->second;
    return Ty::concrete(ElemType::I64);
  }
  if (find_function(e.name)) {
    error(e.span, quote(e.name) + " is a function; call it in a statement of its own: 'r = " +
                      e.name + "(...)'");
    return Ty::poison();
  }
  error(e.span, "unknown name " + quote(e.name));
  return Ty::poison();
}

Ty Lowerer::infer_access(const ast::Expr& e, StmtInfo& st, NodeInfo& info) {
  Span name_span = e.name_span.valid ? e.name_span : e.span;
  const Binding* b = scopes_.find(e.name);
  if (!b) {
    if (st.index_of.count(e.name) || find_loop(e.name) || env_.sizes.count(e.name))
      error(name_span, quote(e.name) + " is not a tensor; it cannot be indexed");
    else if (find_function(e.name))
      error(e.span, "a call of " + quote(e.name) +
                        " must be a statement of its own: 'r = " + e.name + "(...)'");
    else
      error(name_span, "unknown name " + quote(e.name));
    return Ty::poison();
  }
  if (b->rank >= 0 && size_t(b->rank) != e.args.size()) {
    Diagnostic& d =
        error(e.span, "rank mismatch: " + quote(e.name) + " has rank " + std::to_string(b->rank) +
                          " but is indexed with " + std::to_string(e.args.size()) + " indices");
    d.notes.push_back(
        {b->decl, quote(e.name) + (b->is_input ? " is declared here" : " is defined here")});
    return Ty::poison();
  }
  RangeRead read;
  read.tensor = e.name;
  read.guarded = e.guarded;
  read.conditional = st.in_branch > 0;
  read.span = e.span;
  bool ok = b->ok();
  ir::ValuePtr value = b->value;  // `b` may move when affine() adds a size
  for (const auto& arg : e.args) {
    // An index that is not affine is computed: any integer expression
    // (`I(i, k)`, `i % 4`, `int32(x(i))`), checked against the tensor at run time.
    std::optional<ir::Affine> a = affine(*arg, st);
    read.computed.push_back(!a);
    read.spans.push_back(arg->span);
    read.dims.push_back(a ? std::move(*a) : ir::affine_const(0));
    if (a) continue;
    ok &= integer(*arg, infer(*arg, st), "an index");
  }
  if (!ok) return Ty::poison();
  read.shape = value->shape;
  info.tensor = value;
  info.read = int(st.reads.size());
  st.reads.push_back(std::move(read));
  return Ty::concrete(value->type);
}

bool Lowerer::integer(const ast::Expr& e, Ty t, const char* what) {
  if (t.kind == Ty::Poison) return false;
  if ((t.kind == Ty::Concrete && is_int(t.type)) || (t.kind == Ty::Literal && t.int_ok))
    return true;
  error(e.span, std::string(what) + " must be an integer, but " + quote(text(e.span)) + " is " +
                    type_word(t) + (t.is(ElemType::Bool) ? "" : "; convert it with int32(...)"));
  return false;
}

// select(c, a, b) and c ? a : b: the reads in a and b are conditional (see ranges.h).
Ty Lowerer::infer_select(const ast::Expr& e, StmtInfo& st) {
  if (e.args.size() != 3) return Ty::poison();
  Ty cond = infer(*e.args[0], st);
  ++st.in_branch;
  Ty a = infer(*e.args[1], st);
  Ty b = infer(*e.args[2], st);
  --st.in_branch;
  bool poisoned = cond.kind == Ty::Poison;
  if (!cond.is(ElemType::Bool) && !poisoned) {
    const std::string what = e.kind == ast::ExprKind::Ternary ? "'?:'" : "select";
    error(e.args[0]->span, "the condition of " + what + " must be bool, but " +
                               quote(text(e.args[0]->span)) + " is " + type_word(cond));
    poisoned = true;
  }
  Ty t = unify(e, *e.args[1], a, *e.args[2], b, false, false, nullptr);
  return poisoned ? Ty::poison() : t;
}

Ty Lowerer::infer_builtin(const ast::Expr& e, StmtInfo& st, NodeInfo& info) {
  if (e.name == "select") return infer_select(e, st);
  std::vector<Ty> args;
  bool poisoned = false;
  for (const auto& a : e.args) {
    args.push_back(infer(*a, st));
    poisoned |= args.back().kind == Ty::Poison;
  }
  int arity = ast::builtin_arity(e.name);
  if (arity < 0 || size_t(arity) != e.args.size()) {
    error(e.span, arity < 0 ? "unknown function " + quote(e.name)
                            : quote(e.name) + " takes " + std::to_string(arity) +
                                  (arity == 1 ? " argument, " : " arguments, ") +
                                  std::to_string(e.args.size()) + " given");
    return Ty::poison();
  }
  if (poisoned) return Ty::poison();
  if (e.name == "fma") {  // a * b + c
    Ty product = unify(e, *e.args[0], args[0], *e.args[1], args[1], true, true, nullptr);
    if (product.kind == Ty::Poison) return product;
    return unify(e, *e.args[0], product, *e.args[2], args[2], true, true, nullptr);
  }
  const ir::Operands operands = ir::find_builtin(e.name)->operands;
  if (arity == 2) {
    const bool floats = operands == ir::Operands::Floats;
    return unify(e, *e.args[0], args[0], *e.args[1], args[1], true, floats, nullptr);
  }
  Ty a = args[0];
  const bool any_number = operands == ir::Operands::Numbers;
  if (a.is(ElemType::Bool) || (!any_number && a.kind == Ty::Concrete && !is_float(a.type))) {
    Diagnostic& d =
        error(e.args[0]->span, quote(e.name) + " needs a " + (any_number ? "number" : "float") +
                                   ", but " + quote(text(e.args[0]->span)) + " is " + type_word(a));
    if (!a.is(ElemType::Bool))
      d.notes.push_back(
          {e.args[0]->span, "convert it with a cast: 'float32(" + text(e.args[0]->span) + ")'"});
    return Ty::poison();
  }
  if (a.kind == Ty::Literal && !any_number) return Ty::literal(false);
  return computed(a);
}

Ty Lowerer::infer_binary(const ast::Expr& e, StmtInfo& st, NodeInfo& info) {
  if (e.args.size() != 2) return Ty::poison();
  Ty a = infer(*e.args[0], st);
  Ty b = infer(*e.args[1], st);
  const ast::Expr& ea = *e.args[0];
  const ast::Expr& eb = *e.args[1];
  std::optional<ir::BinOp> op = binary_op(e.op);
  if (!op) {
    error(e.span, "unknown operator " + quote(e.op));
    return Ty::poison();
  }
  if (ir::is_logical(*op)) {
    if (a.kind == Ty::Poison || b.kind == Ty::Poison) return Ty::poison();
    for (auto [ex, t] : {std::pair{&ea, a}, std::pair{&eb, b}}) {
      if (t.is(ElemType::Bool)) continue;
      error(ex->span, quote(e.op) + " needs bool operands, but " + quote(text(ex->span)) + " is " +
                          type_word(t));
      return Ty::poison();
    }
    return Ty::concrete(ElemType::Bool);
  }
  if (ir::is_comparison(*op)) {
    if (a.is(ElemType::Bool) && b.is(ElemType::Bool) &&
        (*op == ir::BinOp::Eq || *op == ir::BinOp::Ne)) {
      info.operand = ElemType::Bool;
      return Ty::concrete(ElemType::Bool);
    }
    Ty t = unify(e, ea, a, eb, b, true, false, &info.operand);
    return t.kind == Ty::Poison ? t : Ty::concrete(ElemType::Bool);
  }
  Ty t = unify(e, ea, a, eb, b, true, false, nullptr);
  auto is_float_operand = [](Ty x) {
    return x.kind == Ty::Concrete ? is_float(x.type) : !x.int_ok;
  };
  if (*op == ir::BinOp::Rem && t.kind != Ty::Poison && is_float_operand(t)) {
    const bool a_float = is_float_operand(a);
    const ast::Expr& f = a_float ? ea : eb;
    error(e.span, "'%' is the remainder of integers, but " + quote(text(f.span)) + " is " +
                      type_word(a_float ? a : b));
    return Ty::poison();
  }
  return t;
}

// The common type of two operands of `whole` (an operator or a builtin).
// `numeric`: bool operands are errors. `floats_only`: integer operands are too.
// `operand` receives the type both are converted to (float32 for two literals).
Ty Lowerer::unify(const ast::Expr& whole, const ast::Expr& a, Ty ta, const ast::Expr& b, Ty tb,
                  bool numeric, bool floats_only, ElemType* operand) {
  if (ta.kind == Ty::Poison || tb.kind == Ty::Poison) return Ty::poison();
  std::string op = whole.kind == ast::ExprKind::Builtin   ? whole.name
                   : whole.kind == ast::ExprKind::Ternary ? "?:"
                                                          : whole.op;
  const std::string words = type_word(ta) + " and " + type_word(tb);  // float16 as written
  auto mismatch = [&](const ast::Expr* note_at, const std::string& note) {
    Diagnostic& d = error(whole.span, "type mismatch: " + words + " operands of " + quote(op));
    if (note_at) d.notes.push_back({note_at->span, note});
    return Ty::poison();
  };
  ta = computed(ta);
  tb = computed(tb);
  // A bool in arithmetic, or against a number in select, is 0 or 1 of the
  // other operand's type; as in C, two bools (and a bool and a literal)
  // compute in int32.
  const bool a_bool = ta.is(ElemType::Bool), b_bool = tb.is(ElemType::Bool);
  if ((a_bool || b_bool) && (numeric || a_bool != b_bool)) {
    const Ty as_int = Ty::concrete(ElemType::I32);
    if (a_bool) ta = b_bool || tb.kind == Ty::Literal ? as_int : tb;
    if (b_bool) tb = a_bool || ta.kind == Ty::Literal ? as_int : ta;
  }
  auto cast_note = [&](const ast::Expr& int_side, ElemType to) {
    return "convert it with a cast: '" + std::string(type_name(to)) + "(" + text(int_side.span) +
           ")'";
  };
  Ty result;
  if (ta.kind == Ty::Concrete && tb.kind == Ty::Concrete) {
    if (ta.type == tb.type) {
      result = ta;
    } else if (is_int(ta.type) && is_int(tb.type)) {
      result = Ty::concrete(wider_int(ta.type, tb.type));
    } else if (is_float(ta.type) && is_float(tb.type)) {
      return mismatch(&b, "convert one side with a cast, e.g. '" + std::string(type_name(ta.type)) +
                              "(" + text(b.span) + ")'");
    } else {
      // TC's promotion: an integer operand (an index, a size, an integer
      // tensor) meets a float and is converted to the float's type.
      result = Ty::concrete(is_float(ta.type) ? ta.type : tb.type);
    }
  } else if (ta.kind == Ty::Literal && tb.kind == Ty::Literal) {
    result = Ty::literal(ta.int_ok && tb.int_ok && !floats_only);
  } else {
    Ty concrete = ta.kind == Ty::Concrete ? ta : tb;
    Ty literal = ta.kind == Ty::Concrete ? tb : ta;
    // An integer against a float literal (`i * 0.5`) is promoted to a float
    // whose type, like a literal's, the context decides (float32 alone).
    result = is_int(concrete.type) && !literal.int_ok ? literal : concrete;
  }
  if (floats_only && result.kind == Ty::Concrete && !is_float(result.type)) {
    const ast::Expr& int_side = ta.kind == Ty::Concrete ? a : b;
    Diagnostic& d = error(whole.span, quote(op) + " needs float operands, but " +
                                          quote(text(int_side.span)) + " is " + type_word(result));
    d.notes.push_back({int_side.span, cast_note(int_side, ElemType::F32)});
    return Ty::poison();
  }
  if (operand) *operand = result.kind == Ty::Concrete ? result.type : ElemType::F32;
  return result;
}

ir::Expr Lowerer::emit_access(const ast::Expr& e, const StmtInfo& st) {
  const NodeInfo& info = st.nodes.at(&e);
  const RangeRead& read = st.reads.at(size_t(info.read));
  std::vector<ir::Expr> computed;
  for (size_t d = 0; d < read.computed.size(); ++d) {
    computed.emplace_back();
    if (!read.computed[d]) continue;
    computed.back() = emit(*e.args[d], st, ElemType::I64);
    if (computed.back()->type != ElemType::I64)
      computed.back() = ir::make_cast(computed.back(), ElemType::I64);
  }
  return ir::make_read(info.tensor, read.dims, std::move(computed), read.guarded);
}

// Builds e as an expression of type `want` (pass 2; infer() succeeded on it).
// float16 values are float32 expressions (reads of float16 tensors load as
// float32), except the result of a cast `float16(x)` itself.
ir::Expr Lowerer::emit(const ast::Expr& e, const StmtInfo& st, ElemType want) {
  const NodeInfo& info = st.nodes.at(&e);
  TENET_ASSERT(info.ty.kind != Ty::Poison, "emitting a poisoned expression");
  if (want == ElemType::F16 && e.kind != ast::ExprKind::Cast) want = ElemType::F32;
  ElemType own = info.ty.kind == Ty::Concrete ? compute_type(info.ty.type) : want;
  ir::Expr r;
  switch (e.kind) {
    case ast::ExprKind::Number:
      r = emit_number(e, own, false);
      break;
    case ast::ExprKind::Name:
      r = name_expr(info, e.name);
      break;
    case ast::ExprKind::Access:
      r = emit_access(e, st);
      break;
    case ast::ExprKind::Ternary:
    case ast::ExprKind::Builtin:
      if (e.kind == ast::ExprKind::Ternary || e.name == "select") {
        r = ir::make_select(emit(*e.args[0], st, ElemType::Bool), emit(*e.args[1], st, own),
                            emit(*e.args[2], st, own));
      } else if (e.name == "fma") {
        r = ir::make_binary(
            ir::BinOp::Add,
            ir::make_binary(ir::BinOp::Mul, emit(*e.args[0], st, own), emit(*e.args[1], st, own)),
            emit(*e.args[2], st, own));
      } else if (auto u = unary_builtin(e.name)) {
        r = ir::make_unary(*u, emit(*e.args[0], st, own));
      } else {
        r = ir::make_binary(*binary_op(e.name), emit(*e.args[0], st, own),
                            emit(*e.args[1], st, own));
      }
      break;
    case ast::ExprKind::Unary:
      if (e.op == "!")
        r = ir::make_unary(ir::UnOp::Not, emit(*e.args[0], st, ElemType::Bool));
      else if (e.args[0]->kind == ast::ExprKind::Number)  // -128 is an int8
        r = ir::make_unary(ir::UnOp::Neg, emit_number(*e.args[0], own, true));
      else
        r = ir::make_unary(ir::UnOp::Neg, emit(*e.args[0], st, own));
      break;
    case ast::ExprKind::Binary: {
      ir::BinOp op = *binary_op(e.op);
      // A remainder of literals only (`7 % 2`) is computed in int64.
      const bool int_literals = op == ir::BinOp::Rem && info.ty.kind == Ty::Literal;
      ElemType operand = ir::is_comparison(op) ? info.operand
                         : ir::is_logical(op)  ? ElemType::Bool
                         : int_literals        ? ElemType::I64
                                               : own;
      r = ir::make_binary(op, emit(*e.args[0], st, operand), emit(*e.args[1], st, operand));
      break;
    }
    case ast::ExprKind::Cast: {
      const NodeInfo& arg = st.nodes.at(e.args[0].get());
      ElemType from = arg.ty.kind == Ty::Concrete ? arg.ty.type : info.operand;
      r = ir::make_cast(emit(*e.args[0], st, from), e.cast_to);
      break;
    }
  }
  return r->type == want ? r : ir::make_cast(r, want);
}

}  // namespace tenet::lang::detail
