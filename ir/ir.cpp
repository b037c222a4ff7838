#include "ir/ir.h"

#include <sstream>

namespace tenet::ir {

int64_t Affine::coef(const std::string& index) const {
  for (const auto& [name, c] : terms)
    if (name == index) return c;
  return 0;
}

std::string Affine::str() const {
  std::ostringstream os;
  bool first = true;
  for (const auto& [name, c] : terms) {
    int64_t mag = c < 0 ? -c : c;
    if (first)
      os << (c < 0 ? "-" : "");
    else
      os << (c < 0 ? " - " : " + ");
    if (mag != 1) os << mag << '*';
    os << name;
    first = false;
  }
  if (first) return offset.str();
  if (auto k = offset.constant()) {
    if (*k > 0) os << " + " << *k;
    if (*k < 0) os << " - " << -*k;
  } else {
    os << " + " << (offset.is_constant() ? offset.str() : "(" + offset.str() + ")");
  }
  return os.str();
}

const char* op_name(UnOp op) {
  switch (op) {
    case UnOp::Neg:
      return "neg";
    case UnOp::Not:
      return "not";
    case UnOp::Exp:
      return "exp";
    case UnOp::Log:
      return "log";
    case UnOp::Sqrt:
      return "sqrt";
    case UnOp::Tanh:
      return "tanh";
    case UnOp::Sigmoid:
      return "sigmoid";
    case UnOp::Abs:
      return "abs";
    case UnOp::Rsqrt:
      return "rsqrt";
    case UnOp::Floor:
      return "floor";
    case UnOp::Ceil:
      return "ceil";
    case UnOp::Round:
      return "round";
    case UnOp::Trunc:
      return "trunc";
    case UnOp::Rint:
      return "rint";
    case UnOp::Exp2:
      return "exp2";
    case UnOp::Log2:
      return "log2";
    case UnOp::Log10:
      return "log10";
    case UnOp::Log1p:
      return "log1p";
    case UnOp::Expm1:
      return "expm1";
    case UnOp::Sin:
      return "sin";
    case UnOp::Cos:
      return "cos";
    case UnOp::Tan:
      return "tan";
    case UnOp::Asin:
      return "asin";
    case UnOp::Acos:
      return "acos";
    case UnOp::Atan:
      return "atan";
    case UnOp::Sinh:
      return "sinh";
    case UnOp::Cosh:
      return "cosh";
    case UnOp::Erf:
      return "erf";
    case UnOp::Erfc:
      return "erfc";
    case UnOp::Cbrt:
      return "cbrt";
    case UnOp::Sign:
      return "sign";
    case UnOp::StopGradient:
      return "stop_gradient";
  }
  return "?";
}

const char* op_name(BinOp op) {
  switch (op) {
    case BinOp::Add:
      return "add";
    case BinOp::Sub:
      return "sub";
    case BinOp::Mul:
      return "mul";
    case BinOp::Div:
      return "div";
    case BinOp::Pow:
      return "pow";
    case BinOp::Max:
      return "max";
    case BinOp::Min:
      return "min";
    case BinOp::Lt:
      return "lt";
    case BinOp::Le:
      return "le";
    case BinOp::Gt:
      return "gt";
    case BinOp::Ge:
      return "ge";
    case BinOp::Eq:
      return "eq";
    case BinOp::Ne:
      return "ne";
    case BinOp::And:
      return "and";
    case BinOp::Or:
      return "or";
    case BinOp::Atan2:
      return "atan2";
    case BinOp::Hypot:
      return "hypot";
    case BinOp::Copysign:
      return "copysign";
    case BinOp::Nextafter:
      return "nextafter";
    case BinOp::Rem:
      return "rem";
  }
  return "?";
}

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::None:
      return "assign";
    case ReduceOp::Sum:
      return "sum";
    case ReduceOp::Max:
      return "max";
    case ReduceOp::Min:
      return "min";
    case ReduceOp::Prod:
      return "prod";
  }
  return "?";
}

bool is_comparison(BinOp op) {
  return op >= BinOp::Lt && op <= BinOp::Ne;
}
bool is_logical(BinOp op) {
  return op == BinOp::And || op == BinOp::Or;
}

bool floats_only(BinOp op) {
  return op == BinOp::Pow || op == BinOp::Atan2 || op == BinOp::Hypot || op == BinOp::Copysign ||
         op == BinOp::Nextafter;
}

namespace {
void deep_copy_loops(std::vector<Stmt>& body) {
  for (Stmt& s : body) {
    if (s.kind != StmtKind::Loop) continue;
    s.loop = std::make_shared<Loop>(*s.loop);
    deep_copy_loops(s.loop->body);
  }
}
}  // namespace

int Function::updated_input(size_t i) const {
  if (i >= outputs.size() || i >= output_names.size()) return -1;
  for (size_t k = 0; k < inputs.size(); ++k)
    if (inputs[k]->name == output_names[i] && inputs[k] != outputs[i]) return int(k);
  return -1;
}

int Function::gradient_of(size_t i) const {
  return i < gradient_inputs.size() ? gradient_inputs[i] : -1;
}

int Function::gradient_output(size_t k) const {
  for (size_t i = 0; i < gradient_inputs.size(); ++i)
    if (gradient_inputs[i] == int(k)) return int(i);
  return -1;
}

Function Function::clone() const {
  Function f = *this;
  deep_copy_loops(f.body);
  return f;
}

const Function* Module::find(const std::string& name) const {
  for (const auto& f : functions)
    if (f.name == name) return &f;
  return nullptr;
}

Function* Module::find(const std::string& name) {
  for (auto& f : functions)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace tenet::ir
