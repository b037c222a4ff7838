// Grouped reduction kernels (kernel_groups.h), part of stage map_kernels.
#include "lower/kernel_groups.h"

#include <optional>
#include <utility>
#include <vector>

#include "lower/kernel_nodes.h"

namespace tenet::lower {

namespace {

using namespace kernel_nodes;

/// The value of `e` when it is a constant (of literals and constant extents).
std::optional<int64_t> constant_of(const IndexExpr& e) {
  switch (e->kind) {
    case IndexKind::Const:
      return e->value;
    case IndexKind::Size:
      return e->size.constant();
    case IndexKind::Extent:
      return e->tensor->shape.at(size_t(e->dim)).constant();
    case IndexKind::Mul:
    case IndexKind::Sub: {
      const auto a = constant_of(e->args.at(0)), b = constant_of(e->args.at(1));
      if (!a || !b) return std::nullopt;
      return e->kind == IndexKind::Mul ? *a * *b : *a - *b;
    }
    default:
      return std::nullopt;
  }
}

/// The block a thread of `kernel` runs per element: inside its innermost
/// grid loop and the statement regions around the one thing each runs.
Block* thread_body(Block& block) {
  Node* only = only_node(block);
  if (only && ((only->kind == NodeKind::For && only->loop_kind == LoopKind::GpuThread) ||
               (is_container(*only) && !only->resume)))
    return thread_body(only->body);
  return &block;
}

/// The reduction `acc` of a reduce loop's body: every assignment updates
/// `acc` with one op and nothing else is written or needs the host. Sets `op`.
bool updates_only(const Block& block, const Var& acc, ir::ReduceOp& op) {
  for (const Node& n : block) {
    switch (n.kind) {
      case NodeKind::Assign:
        if (n.target.tensor || n.target.local.id != acc.id || n.target.at) return false;
        if (n.op == ir::ReduceOp::None || (op != ir::ReduceOp::None && n.op != op)) return false;
        op = n.op;
        break;
      case NodeKind::Let:
        if (n.var.accumulates) return false;  // an accumulator of its own
        break;
      case NodeKind::For:
      case NodeKind::If:
      case NodeKind::Scope:
      case NodeKind::Statement:
      case NodeKind::NameScope:
      case NodeKind::Comment:
      case NodeKind::Note:
      case NodeKind::Blank:
      case NodeKind::SkipUnlessInBounds:
        break;
      default:
        return false;  // arrays, aliases, calls, kernels, checks that fail the call
    }
    if (!updates_only(n.body, acc, op) || !updates_only(n.orelse, acc, op)) return false;
  }
  return true;
}

/// The next loop of the lanes' collapsed nest inside `loop`: its body's one
/// loop, when everything else is a local or a remark.
Node* next_lane_loop(Node& loop) {
  Node* n = only_node(loop.body);
  if (n && n->kind == NodeKind::For && n->loop_kind == LoopKind::Serial && is_rectangular_loop(*n))
    return n;
  return nullptr;
}

/// A thread body of the grouped form: where its accumulator and its reduce
/// loop are, the reduction, the loops the lanes share and their length.
struct Match {
  Block* body = nullptr;
  size_t acc_at = 0, loop_at = 0;
  ir::ReduceOp op = ir::ReduceOp::None;
  std::vector<Node*> chain;
  IndexExpr length;
};

/// Whether `acc` starts an accumulator a group may split: from the identity,
/// of a type the lanes combine (4 or 8 bytes).
bool splittable_accumulator(const Node& acc) {
  if (acc.kind != NodeKind::Let || !acc.var.accumulates || acc.index || acc.expr ||
      acc.computed_dim >= 0 ||
      !(acc.source.kind == Operand::Identity || acc.source.kind == Operand::Zero))
    return false;
  return acc.wide || acc.type == ElemType::F32 || acc.type == ElemType::F64 ||
         acc.type == ElemType::I32 || acc.type == ElemType::I64;
}

/// [locals] let acc = identity [locals] for ... { acc op= ... } [the stores]
std::optional<Match> match(Block& kernel_body) {
  Match m;
  m.body = thread_body(kernel_body);
  Block& body = *m.body;
  size_t at = 0;
  while (at < body.size() &&
         (is_remark(body[at]) || (is_local(body[at]) && !body[at].var.accumulates)))
    ++at;
  if (at == body.size() || !splittable_accumulator(body[at])) return std::nullopt;
  m.acc_at = at;
  size_t loop_at = at + 1;
  while (loop_at < body.size() && (is_remark(body[loop_at]) || is_local(body[loop_at]))) ++loop_at;
  if (loop_at == body.size()) return std::nullopt;
  Node& outer = body[loop_at];
  if (!(outer.kind == NodeKind::For && outer.loop_kind == LoopKind::Serial &&
        is_rectangular_loop(outer)))
    return std::nullopt;
  if (!updates_only(outer.body, body[at].var, m.op) || m.op == ir::ReduceOp::None)
    return std::nullopt;
  for (size_t i = loop_at + 1; i < body.size(); ++i) {
    const Node& n = body[i];
    if (!(is_remark(n) || n.kind == NodeKind::Assign ||
          (n.kind == NodeKind::Let && !n.var.accumulates)))
      return std::nullopt;
  }
  m.loop_at = loop_at;
  m.chain = {&outer};
  while (Node* next = next_lane_loop(*m.chain.back())) m.chain.push_back(next);
  for (size_t i = m.chain.size(); i-- > 0;) m.length = product(extent_of(*m.chain[i]), m.length);
  if (const auto known = constant_of(m.length); known && *known < kMinGroupedLength)
    return std::nullopt;  // short enough for one thread
  return m;
}

}  // namespace

bool is_group_reduction(const Node& n) {
  Block copy{n};
  return match(copy).has_value();
}

bool group_reduction(Node& kernel, LoopTree& tree) {
  std::optional<Match> m = match(kernel.body);
  if (!m) return false;
  IndexExpr inner;
  for (size_t i = m->chain.size(); i-- > 0;) {
    m->chain[i]->loop_kind = LoopKind::GpuLane;
    m->chain[i]->grid_stride = inner ? inner : ix::constant(1);
    inner = product(extent_of(*m->chain[i]), inner);
  }
  Block& body = *m->body;
  const Node& acc = body[m->acc_at];
  kernel.grouped = true;
  kernel.reduce_length = m->length;
  kernel.group = {fresh_var(tree, "lanes"), fresh_var(tree, "lane"), fresh_var(tree, "active"),
                  fresh_var(tree, "element"), fresh_var(tree, "r")};
  Node reduce;
  reduce.kind = NodeKind::GroupReduce;
  reduce.var = acc.var;
  reduce.op = m->op;
  reduce.type = acc.type;
  reduce.wide = acc.wide;
  Node leader;
  leader.kind = NodeKind::GroupLeader;
  for (size_t i = m->loop_at + 1; i < body.size(); ++i) leader.body.push_back(std::move(body[i]));
  body.resize(m->loop_at + 1);
  body.push_back(std::move(reduce));
  body.push_back(std::move(leader));
  return true;
}

}  // namespace tenet::lower
