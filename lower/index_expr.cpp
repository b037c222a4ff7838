#include "lower/index_expr.h"

#include "ir/printer.h"
#include "support/error.h"

namespace tenet::lower {

namespace ix {

namespace {
std::shared_ptr<IndexNode> node(IndexKind kind) {
  auto n = std::make_shared<IndexNode>();
  n->kind = kind;
  return n;
}
}  // namespace

IndexExpr constant(int64_t v) {
  auto n = node(IndexKind::Const);
  n->value = v;
  return n;
}

IndexExpr size(const ir::SizeExpr& s) {
  auto n = node(IndexKind::Size);
  n->size = s;
  return n;
}

IndexExpr extent(const ir::Value* tensor, int dim) {
  auto n = node(IndexKind::Extent);
  n->tensor = tensor;
  n->dim = dim;
  return n;
}

IndexExpr var(const Var& v) {
  TENET_ASSERT(v.valid(), "an undeclared variable " << v.hint << " in a loop bound");
  auto n = node(IndexKind::Variable);
  n->var = v;
  return n;
}

IndexExpr affine(const ir::Affine& a) {
  auto n = node(IndexKind::Affine);
  n->affine = a;
  return n;
}

IndexExpr value(const ir::Expr& e) {
  auto n = node(IndexKind::Value);
  n->value_expr = e;
  return n;
}

IndexExpr binary(IndexKind kind, IndexExpr a, IndexExpr b) {
  auto n = node(kind);
  n->args = {std::move(a), std::move(b)};
  return n;
}

IndexExpr fold(IndexKind kind, std::vector<IndexExpr> args) {
  TENET_ASSERT(!args.empty(), "max or min of nothing");
  if (args.size() == 1) return args[0];
  auto n = node(kind);
  n->args = std::move(args);
  return n;
}

}  // namespace ix

std::string print(const IndexExpr& e, const std::vector<std::string>& names) {
  auto arg = [&](size_t i) { return print(e->args[i], names); };
  auto infix = [&](const char* op) { return "(" + arg(0) + " " + op + " " + arg(1) + ")"; };
  switch (e->kind) {
    case IndexKind::Const:
      return std::to_string(e->value);
    case IndexKind::Size:
      return e->size.str();
    case IndexKind::Extent:
      return e->tensor->name + ".dim" + std::to_string(e->dim);
    case IndexKind::Variable:
      return size_t(e->var.id) < names.size() ? names[size_t(e->var.id)] : e->var.hint;
    case IndexKind::Affine:
      return e->affine.str();
    case IndexKind::Value:
      return ir::print(e->value_expr);
    case IndexKind::Add:
      return infix("+");
    case IndexKind::Sub:
      return infix("-");
    case IndexKind::Mul:
      return infix("*");
    case IndexKind::Div:
      return infix("/");
    case IndexKind::FloorDiv:
      return "floordiv(" + arg(0) + ", " + arg(1) + ")";
    case IndexKind::CeilDiv:
      return "ceildiv(" + arg(0) + ", " + arg(1) + ")";
    case IndexKind::Max:
    case IndexKind::Min: {
      std::string text = e->kind == IndexKind::Max ? "max(" : "min(";
      for (size_t i = 0; i < e->args.size(); ++i) text += (i ? ", " : "") + arg(i);
      return text + ")";
    }
  }
  return "?";
}

}  // namespace tenet::lower
