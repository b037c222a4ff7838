#include "ir/builder.h"

#include <limits>
#include <optional>

#include "ir/affine.h"
#include "ir/verify.h"
#include "support/error.h"

namespace tenet::ir {

namespace {
std::shared_ptr<ExprNode> node(ExprKind kind, ElemType type) {
  auto n = std::make_shared<ExprNode>();
  n->kind = kind;
  n->type = type;
  return n;
}
}  // namespace

Expr make_const(double value, ElemType type) {
  auto n = node(ExprKind::Const, type);
  n->value = value;
  return n;
}

Expr make_index(const std::string& name) {
  auto n = node(ExprKind::Index, ElemType::I64);
  n->index = name;
  return n;
}

Expr make_size(const SizeExpr& size) {
  auto n = node(ExprKind::Size, ElemType::I64);
  n->size = size;
  return n;
}

Expr make_read(const ValuePtr& tensor, std::vector<Affine> indices, bool guarded) {
  TENET_ASSERT(tensor, "read of a null tensor");
  TENET_ASSERT(int(indices.size()) == tensor->rank(),
               "read of " << tensor->name << " with " << indices.size() << " indices, rank "
                          << tensor->rank());
  auto n = node(ExprKind::Read, compute_type(tensor->type));  // float16 loads as float32
  n->tensor = tensor;
  n->indices = std::move(indices);
  n->guarded = guarded;
  return n;
}

Expr make_read_at(const ValuePtr& tensor, std::vector<Expr> indices, bool guarded) {
  std::vector<Affine> affine(indices.size(), affine_const(0));
  return make_read(tensor, std::move(affine), std::move(indices), guarded);
}

bool stays_computed(const Expr& index, const SizeExpr& extent, bool guarded) {
  const std::optional<Affine> a = linear_form(index);
  if (!a) return true;
  if (guarded || !a->terms.empty()) return false;
  const std::optional<int64_t> k = a->offset.constant(), n = extent.constant();
  return k && n && (*k < 0 || *k >= *n);
}

Expr make_read(const ValuePtr& tensor, std::vector<Affine> indices, std::vector<Expr> computed,
               bool guarded) {
  TENET_ASSERT(computed.empty() || computed.size() == indices.size(),
               "read of " << tensor->name << ": computed indices for some dimensions only");
  bool any = false;
  for (size_t d = 0; d < computed.size(); ++d) {
    if (!computed[d]) continue;
    TENET_ASSERT(computed[d]->type == ElemType::I64,
                 "index " << d << " of a read of " << tensor->name << " is not int64");
    if (!stays_computed(computed[d], tensor->shape[d], guarded)) {
      indices[d] = *linear_form(computed[d]);
      computed[d] = nullptr;
      continue;
    }
    indices[d] = affine_const(0);
    any = true;
  }
  Expr r = make_read(tensor, std::move(indices), guarded);
  if (!any) return r;
  auto n = std::make_shared<ExprNode>(*r);
  n->computed = std::move(computed);
  return n;
}

Expr make_identity(ReduceOp op, ElemType type) {
  const bool fp = is_float(compute_type(type));
  const double inf = std::numeric_limits<double>::infinity();
  switch (op) {
    case ReduceOp::Max:
      return make_const(fp ? -inf : double(int_range(type).first), type);
    case ReduceOp::Min:
      if (type == ElemType::U64) return nullptr;
      return make_const(fp ? inf : double(int_range(type).second), type);
    case ReduceOp::Prod:
      return make_const(1, type);
    default:
      return make_const(0, type);
  }
}

Expr make_unary(UnOp op, Expr a) {
  TENET_ASSERT(a, "unary of null");
  if (op == UnOp::Not) {
    TENET_ASSERT(a->type == ElemType::Bool, "not of non-bool");
  } else if (op != UnOp::Neg && op != UnOp::Abs) {
    TENET_ASSERT(is_float(a->type), op_name(op) << " of non-float " << type_name(a->type));
  }
  auto n = node(ExprKind::Unary, a->type);
  n->unop = op;
  n->args = {std::move(a)};
  return n;
}

Expr make_binary(BinOp op, Expr a, Expr b) {
  TENET_ASSERT(a && b, "binary of null");
  TENET_ASSERT(a->type == b->type,
               op_name(op) << " of " << type_name(a->type) << " and " << type_name(b->type));
  ElemType t = a->type;
  if (is_comparison(op)) {
    t = ElemType::Bool;
  } else if (is_logical(op)) {
    TENET_ASSERT(a->type == ElemType::Bool, op_name(op) << " of non-bool");
  } else if (floats_only(op)) {
    TENET_ASSERT(is_float(t), op_name(op) << " of non-float");
  } else if (op == BinOp::Rem) {
    TENET_ASSERT(is_int(t), "rem of non-integer");
  }
  auto n = node(ExprKind::Binary, t);
  n->binop = op;
  n->args = {std::move(a), std::move(b)};
  return n;
}

Expr make_select(Expr cond, Expr then_value, Expr else_value) {
  TENET_ASSERT(cond && then_value && else_value, "select of null");
  TENET_ASSERT(cond->type == ElemType::Bool, "select condition is not bool");
  TENET_ASSERT(then_value->type == else_value->type, "select of " << type_name(then_value->type)
                                                                  << " and "
                                                                  << type_name(else_value->type));
  auto n = node(ExprKind::Select, then_value->type);
  n->args = {std::move(cond), std::move(then_value), std::move(else_value)};
  return n;
}

Expr make_cast(Expr a, ElemType to) {
  TENET_ASSERT(a, "cast of null");
  if (a->type == to) return a;
  auto n = node(ExprKind::Cast, to);
  n->args = {std::move(a)};
  return n;
}

Expr with_args(const Expr& e, std::vector<Expr> args) {
  switch (e->kind) {
    case ExprKind::Unary:
      return make_unary(e->unop, std::move(args[0]));
    case ExprKind::Binary:
      return make_binary(e->binop, std::move(args[0]), std::move(args[1]));
    case ExprKind::Select:
      return make_select(std::move(args[0]), std::move(args[1]), std::move(args[2]));
    case ExprKind::Cast:
      return make_cast(std::move(args[0]), e->type);
    default:
      return e;
  }
}

ValuePtr make_value(int id, std::string name, ElemType type, std::vector<SizeExpr> shape,
                    Span span) {
  auto v = std::make_shared<Value>();
  v->id = id;
  v->name = std::move(name);
  v->type = type;
  v->shape = std::move(shape);
  v->span = span;
  return v;
}

ValuePtr with_shape(const ValuePtr& v, std::vector<SizeExpr> shape) {
  auto copy = std::make_shared<Value>(*v);
  copy->shape = std::move(shape);
  return copy;
}

ValuePtr with_layout(const ValuePtr& v, std::vector<int> layout) {
  auto copy = std::make_shared<Value>(*v);
  copy->layout = std::move(layout);
  return copy;
}

ValuePtr renamed(const ValuePtr& v, int id, std::string name) {
  auto copy = std::make_shared<Value>(*v);
  copy->id = id;
  copy->name = std::move(name);
  return copy;
}

FunctionBuilder::FunctionBuilder(std::string name, Span span) {
  fn_.name = std::move(name);
  fn_.span = span;
}

void FunctionBuilder::size_param(const std::string& name) {
  for (const auto& s : fn_.size_params)
    if (s == name) return;
  fn_.size_params.push_back(name);
}

std::string FunctionBuilder::unique_name(const std::string& base) {
  // An entry with count 0 is a name reserved as another base's version ("b.1"
  // for the second "b"): it is taken, so this base starts at its first version.
  auto reserved = name_counts_.find(base);
  if (reserved != name_counts_.end() && reserved->second == 0) reserved->second = 1;
  int& count = name_counts_[base];
  std::string name = count == 0 ? base : base + "." + std::to_string(count);
  ++count;
  // A source name may itself look like "b.1"; keep going until unused.
  while (count > 1 && name_counts_.count(name) && name != base) {
    name = base + "." + std::to_string(count);
    ++count;
  }
  name_counts_[name];  // reserve
  if (name != base) base_of_[name] = base;
  return name;
}

const std::string& FunctionBuilder::base_of(const std::string& name) const {
  auto it = base_of_.find(name);
  return it == base_of_.end() ? name : it->second;
}

ValuePtr FunctionBuilder::new_value(const std::string& name, ElemType type,
                                    std::vector<SizeExpr> shape, Span span) {
  return make_value(next_id_++, unique_name(name), type, std::move(shape), span);
}

ValuePtr FunctionBuilder::input(const std::string& name, ElemType type, std::vector<SizeExpr> shape,
                                Span span) {
  for (const auto& dim : shape)
    for (const auto& sym : dim.symbols()) size_param(sym);
  auto v = new_value(name, type, std::move(shape), span);
  fn_.inputs.push_back(v);
  return v;
}

std::vector<Stmt>& FunctionBuilder::block() {
  return open_loops_.empty() ? fn_.body : open_loops_.back()->loop->body;
}

ValuePtr FunctionBuilder::compute(const std::string& name, std::vector<Dim> out,
                                  std::vector<Dim> reduce, ReduceOp op, Expr body, ValuePtr init,
                                  ElemType type, Span span, std::string source) {
  std::vector<SizeExpr> shape;
  for (const Dim& d : out) shape.push_back(d.hi);
  auto result = new_value(name, type, std::move(shape), span);
  Stmt s;
  s.kind = StmtKind::Compute;
  s.compute =
      Compute{result, std::move(out), std::move(reduce), op, std::move(init), std::move(body)};
  s.span = span;
  s.source = std::move(source);
  block().push_back(std::move(s));
  return result;
}

ValuePtr FunctionBuilder::compute_auto(const std::string& name, std::vector<Dim> out,
                                       std::vector<Dim> reduce, ReduceOp op, Expr body,
                                       ValuePtr init, Span span, std::string source) {
  ElemType t = body->type;
  return compute(name, std::move(out), std::move(reduce), op, std::move(body), std::move(init), t,
                 span, std::move(source));
}

void FunctionBuilder::begin_loop(const std::string& var, int64_t trip, Span span,
                                 std::string source) {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::Loop;
  s->loop = std::make_shared<Loop>();
  s->loop->var = var;
  s->loop->trip = trip;
  s->span = span;
  s->source = std::move(source);
  open_loops_.push_back(std::move(s));
}

ValuePtr FunctionBuilder::carry(const ValuePtr& init, const std::string& name) {
  TENET_ASSERT(!open_loops_.empty(), "carry() outside a loop");
  auto param = new_value(name, init->type, init->shape, init->span);
  open_loops_.back()->loop->carried.push_back(Loop::Carried{init, param, nullptr, nullptr});
  return param;
}

std::vector<ValuePtr> FunctionBuilder::end_loop(const std::vector<ValuePtr>& next,
                                                const std::vector<ValuePtr>& live_out) {
  TENET_ASSERT(!open_loops_.empty(), "end_loop() without begin_loop()");
  std::unique_ptr<Stmt> s = std::move(open_loops_.back());
  open_loops_.pop_back();
  Loop& loop = *s->loop;
  TENET_ASSERT(next.size() == loop.carried.size(),
               "end_loop: " << next.size() << " next values for " << loop.carried.size()
                            << " carried tensors");
  std::vector<ValuePtr> results;
  for (size_t i = 0; i < next.size(); ++i) {
    Loop::Carried& c = loop.carried[i];
    c.next = next[i];
    // Named after the base the init was named from: "t.7", not "t.3.1" (a
    // name growing by ".1" per loop made n loops in a row quadratic).
    c.result = new_value(base_of(c.init->name), c.init->type, c.init->shape, c.init->span);
    results.push_back(c.result);
  }
  for (const ValuePtr& v : live_out) {
    auto result = new_value(base_of(v->name), v->type, v->shape, v->span);
    loop.carried.push_back(Loop::Carried{nullptr, nullptr, v, result});
    results.push_back(result);
  }
  block().push_back(std::move(*s));
  return results;
}

void FunctionBuilder::output(const ValuePtr& v, const std::string& name, int gradient_of) {
  fn_.outputs.push_back(v);
  fn_.output_names.push_back(name.empty() ? v->name : name);
  if (gradient_of >= 0 && fn_.gradient_inputs.empty())
    fn_.gradient_inputs.assign(fn_.outputs.size() - 1, -1);
  if (!fn_.gradient_inputs.empty()) fn_.gradient_inputs.push_back(gradient_of);
}

Annotations& FunctionBuilder::annotations() {
  TENET_ASSERT(!block().empty(), "annotations() with no statement");
  return block().back().annotations;
}

Function FunctionBuilder::finish() {
  TENET_ASSERT(open_loops_.empty(), "finish() with an open loop");
  verify(fn_, "building " + fn_.name);
  return std::move(fn_);
}

}  // namespace tenet::ir
