// The language's vocabulary (builtins.h): the one table of builtins.
#include "ir/builtins.h"

namespace tenet::ir {

namespace {

Builtin unary(std::string_view name, UnOp op, Operands operands = Operands::Floats,
              bool preferred = true) {
  return {name, BuiltinKind::Unary, 1, operands, op, BinOp::Add, preferred};
}

Builtin binary(std::string_view name, BinOp op, Operands operands, bool preferred = true) {
  return {name, BuiltinKind::Binary, 2, operands, UnOp::Neg, op, preferred};
}

}  // namespace

const std::vector<Builtin>& builtins() {
  using O = Operands;
  static const std::vector<Builtin> table = {
      unary("exp", UnOp::Exp),
      unary("log", UnOp::Log),
      unary("sqrt", UnOp::Sqrt),
      unary("tanh", UnOp::Tanh),
      unary("sigmoid", UnOp::Sigmoid),
      unary("abs", UnOp::Abs, O::Numbers),
      // Tensor Comprehensions' names: fabs (= abs), rsqrt (= 1 / sqrt), the
      // <cmath> functions it allows, and below min/max (= fmin/fmax) and fma.
      unary("fabs", UnOp::Abs, O::Numbers, false),
      unary("rsqrt", UnOp::Rsqrt),
      unary("floor", UnOp::Floor),
      unary("ceil", UnOp::Ceil),
      unary("round", UnOp::Round),
      unary("trunc", UnOp::Trunc),
      unary("rint", UnOp::Rint),
      unary("exp2", UnOp::Exp2),
      unary("log2", UnOp::Log2),
      unary("log10", UnOp::Log10),
      unary("log1p", UnOp::Log1p),
      unary("expm1", UnOp::Expm1),
      unary("sin", UnOp::Sin),
      unary("cos", UnOp::Cos),
      unary("tan", UnOp::Tan),
      unary("asin", UnOp::Asin),
      unary("acos", UnOp::Acos),
      unary("atan", UnOp::Atan),
      unary("sinh", UnOp::Sinh),
      unary("cosh", UnOp::Cosh),
      unary("erf", UnOp::Erf),
      unary("erfc", UnOp::Erfc),
      unary("cbrt", UnOp::Cbrt),
      // PyTorch's sign and detach (docs/language.md, "Stop-gradient").
      unary("sign", UnOp::Sign),
      unary("stop_gradient", UnOp::StopGradient),
      binary("pow", BinOp::Pow, O::Floats),
      binary("fmax", BinOp::Max, O::Numbers),
      binary("fmin", BinOp::Min, O::Numbers),
      binary("max", BinOp::Max, O::Numbers, false),
      binary("min", BinOp::Min, O::Numbers, false),
      binary("atan2", BinOp::Atan2, O::Floats),
      binary("hypot", BinOp::Hypot, O::Floats),
      binary("copysign", BinOp::Copysign, O::Floats),
      binary("nextafter", BinOp::Nextafter, O::Floats),
      {"select", BuiltinKind::Select, 3, O::Any},
      {"fma", BuiltinKind::Fma, 3, O::Floats},
      {"reshape", BuiltinKind::Reshape, -1, O::Any},
  };
  return table;
}

const Builtin* find_builtin(std::string_view name) {
  for (const Builtin& b : builtins())
    if (b.name == name) return &b;
  return nullptr;
}

const Builtin* builtin_of(UnOp op) {
  for (const Builtin& b : builtins())
    if (b.kind == BuiltinKind::Unary && b.unop == op && b.preferred) return &b;
  return nullptr;
}

const Builtin* builtin_of(BinOp op) {
  for (const Builtin& b : builtins())
    if (b.kind == BuiltinKind::Binary && b.binop == op && b.preferred) return &b;
  return nullptr;
}

const std::vector<std::string_view>& keywords() {
  static const std::vector<std::string_view> words = {"def", "for", "in", "where", "exists"};
  return words;
}

const std::vector<std::string_view>& type_names() {
  static const std::vector<std::string_view> words = {
      "float", "double", "float32", "float64", "float16", "int",    "int8", "uint8",
      "int16", "uint16", "int32",   "uint32",  "int64",   "uint64", "bool"};
  return words;
}

}  // namespace tenet::ir
