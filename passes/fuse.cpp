// The `fuse` pass (fuse.h): element-wise producers inlined into their
// readers, and in gradient programs the save-or-recompute attributes.
#include "passes/fuse.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/affine.h"
#include "ir/builder.h"
#include "ir/mutator.h"
#include "passes/contraction.h"
#include "support/error.h"

namespace tenet::passes {

using namespace ir;

namespace {

/// Fan-ins above this count as "too many" (and keep the arithmetic small).
constexpr int64_t kMaxFanIn = int64_t(1) << 20;

// ---- Expressions ---------------------------------------------------------

int64_t node_cost(const ExprNode& e) {
  switch (e.kind) {
    case ExprKind::Const:
    case ExprKind::Index:
    case ExprKind::Size:
      return 0;
    case ExprKind::Read:
    case ExprKind::Select:
    case ExprKind::Cast:
      return 1;
    case ExprKind::Unary:
      if (e.unop == UnOp::Sqrt) return 4;
      if (e.unop == UnOp::Exp || e.unop == UnOp::Log || e.unop == UnOp::Tanh ||
          e.unop == UnOp::Sigmoid)
        return 16;
      return 1;
    case ExprKind::Binary:
      if (e.binop == BinOp::Div) return 4;
      if (e.binop == BinOp::Pow) return 16;
      return 1;
  }
  return 1;
}

bool multiplies(const Expr& e) {
  return any_node(
      e, [](const Expr& x) { return x->kind == ExprKind::Binary && x->binop == BinOp::Mul; });
}

Expr combine(ReduceOp op, const Expr& acc, const Expr& value) {
  switch (op) {
    case ReduceOp::Sum:
      return make_binary(BinOp::Add, acc, value);
    case ReduceOp::Max:
      return make_binary(BinOp::Max, acc, value);
    case ReduceOp::Min:
      return make_binary(BinOp::Min, acc, value);
    case ReduceOp::Prod:
      return make_binary(BinOp::Mul, acc, value);
    case ReduceOp::None:
      break;
  }
  TENET_UNREACHABLE("combine: not a reduction");
}

// ---- Producers and their uses ---------------------------------------------

/// Computed element by element, with a value expressible as one expression.
bool element_wise(const Compute& c) {
  if (c.result->type == ElemType::F16) return false;  // inlined, it would not round to half
  if (c.op == ReduceOp::None) return true;
  if (!c.reduce.empty() || c.result->type == ElemType::Bool) return false;
  return c.init || is_float(c.result->type);
}

/// The value of element-wise `p` at its own out indices: its body, or the
/// one reduction step `init + body` (`0 + body`, ...) exactly as it rounds.
Expr producer_value(const Compute& p) {
  if (p.op == ReduceOp::None) return p.body;
  Expr start = p.init ? make_read(p.init, plain_indices(p.out)) : make_identity(p.op, p.body->type);
  return combine(p.op, start, p.body);
}

/// The producer's value at the given indices of its result.
Expr value_at(const Compute& p, const Expr& value, const std::vector<Affine>& indices) {
  std::map<std::string, Affine> at;
  for (size_t d = 0; d < p.out.size(); ++d) at[p.out[d].index] = indices[d];
  return ir::substitute(value, at);
}

/// Every value a statement mentions: its reads and init; for a loop, also
/// its carried tensors' inits and nexts and everything its body mentions.
void collect_mentions(const Stmt& s, std::unordered_set<const Value*>& out) {
  auto mentions = [&](const Stmt& t) {
    if (t.kind == StmtKind::Loop) {
      for (const Loop::Carried& c : t.loop->carried) {
        out.insert(c.init.get());
        out.insert(c.next.get());
      }
      return;
    }
    for (const Expr& read : reads_of(t.compute.body)) out.insert(read->tensor.get());
    if (t.compute.init) out.insert(t.compute.init.get());
  };
  mentions(s);
  if (s.kind == StmtKind::Loop) for_each_stmt(s.loop->body, mentions);
}

/// For each value, the positions (ascending) of the statements of a block
/// that mention it, so that finding a producer's uses visits only those.
/// Built once per block: a statement reads only values defined before it,
/// and inlining a producer adds to its readers only reads of values defined
/// before the producer, whose uses were already looked up; so the positions
/// mentioning a value not yet visited never change.
using UseIndex = std::unordered_map<const Value*, std::vector<size_t>>;

UseIndex index_uses(const std::vector<Stmt>& body) {
  UseIndex index;
  std::unordered_set<const Value*> mentioned;
  for (size_t j = 0; j < body.size(); ++j) {
    mentioned.clear();
    collect_mentions(body[j], mentioned);
    for (const Value* v : mentioned) index[v].push_back(j);
  }
  return index;
}

/// One statement that uses the producer.
struct Reader {
  size_t stmt = 0;                     // position in the block
  std::vector<const ExprNode*> reads;  // its reads of the producer
  bool as_init = false;                // the init of its (empty) reduction
};

struct Uses {
  std::vector<Reader> readers;
  std::string blocked;  // why it cannot be inlined at all, if so
};

/// The block a producer lives in, and what can see its values from outside.
struct Block {
  std::vector<Stmt>& body;
  const Loop* enclosing;  // null at top level
  const std::set<const Value*>& outputs;
};

Uses find_uses(const Block& b, const UseIndex& index, size_t at) {
  const Value* p = b.body[at].compute.result.get();
  Uses uses;
  if (b.outputs.count(p)) uses.blocked = "output";
  if (b.enclosing)
    for (const Loop::Carried& c : b.enclosing->carried)
      if (c.next.get() == p) uses.blocked = "carried out of the loop";
  auto mentioning = index.find(p);
  if (mentioning == index.end()) return uses;
  for (size_t j : mentioning->second) {
    if (j <= at) continue;
    if (!uses.blocked.empty()) break;
    const Stmt& s = b.body[j];
    if (s.kind == StmtKind::Loop) {
      uses.blocked = "used inside a loop";
      continue;
    }
    Reader r{j, {}, false};
    for (const Expr& read : reads_of(s.compute.body, p)) r.reads.push_back(read.get());
    const std::string name = "%" + s.compute.result->name;
    for (const ExprNode* read : r.reads)
      if (read->guarded) uses.blocked = "read through a guard by " + name;
    if (s.compute.init.get() == p) {
      if (!s.compute.reduce.empty()) uses.blocked = "the init of the reduction " + name;
      r.as_init = true;
    }
    if (!r.reads.empty() || r.as_init) uses.readers.push_back(std::move(r));
  }
  return uses;
}

/// Domain points of `c` per element of the tensor a read at `indices` reads:
/// the extents of the domain indices no dimension's index determines (each
/// dimension determines the first domain index it mentions that no earlier
/// one did). nullopt when one of them is not a constant or the product is huge.
std::optional<int64_t> fan_in(const Compute& c, const std::vector<Affine>& indices) {
  std::vector<const Dim*> domain;
  for (const Dim& d : c.out) domain.push_back(&d);
  for (const Dim& d : c.reduce) domain.push_back(&d);
  auto in_domain = [&](const std::string& index) {
    return std::any_of(domain.begin(), domain.end(),
                       [&](const Dim* d) { return d->index == index; });
  };
  std::set<std::string> determined;
  for (const Affine& a : indices)
    for (const auto& term : a.terms)
      if (in_domain(term.first) && determined.insert(term.first).second) break;
  int64_t factor = 1;
  for (const Dim* d : domain) {
    if (determined.count(d->index)) continue;
    std::optional<int64_t> extent = d->extent().constant();
    if (!extent || *extent > kMaxFanIn) return std::nullopt;
    factor *= std::max<int64_t>(*extent, 1);
    if (factor > kMaxFanIn) return std::nullopt;
  }
  return factor;
}

struct Decision {
  bool inline_it = false;
  std::string why;  // why it stays (the "save" reason)
  int64_t uses = 0;
};

Decision decide(const Block& b, size_t at, const Uses& uses) {
  if (!uses.blocked.empty()) return {false, uses.blocked, 0};
  if (uses.readers.empty()) return {false, "unused", 0};
  const Expr value = producer_value(b.body[at].compute);
  const int64_t cost = expression_cost(value);
  int64_t evaluations = 0, count = 0;
  for (const Reader& r : uses.readers) {
    const Stmt& s = b.body[r.stmt];
    const std::string name = "%" + s.compute.result->name;
    if (s.annotations.gemm) return {false, "read by " + name + ", a GEMM", 0};
    if (s.annotations.conv) return {false, "read by " + name + ", a convolution", 0};
    if (s.annotations.reshape) return {false, "read by " + name + ", a reshape", 0};
    const bool max_or_min = s.compute.op == ReduceOp::Max || s.compute.op == ReduceOp::Min;
    if (max_or_min && multiplies(value))
      return {false, "read by the max/min reduction " + name + " (its argmax compares)", 0};
    for (const ExprNode* read : r.reads) {
      if (read->has_computed_index())
        return {false, "read by " + name + " through a computed index", 0};
      std::optional<int64_t> f = fan_in(s.compute, read->indices);
      if (!f) return {false, "read by " + name + " at an unbounded fan-in", 0};
      evaluations += *f;
      ++count;
    }
    if (r.as_init) {
      evaluations += 1;
      ++count;
    }
  }
  if (evaluations == 1 && cost <= kMaxInlinedCost) return {true, "", count};
  if (evaluations > 1 && (evaluations - 1) * cost <= kRecomputeBudget) return {true, "", count};
  if (evaluations == 1)
    return {false, "cost " + std::to_string(cost) + " is too large to inline", count};
  return {false,
          "recomputing it for " + std::to_string(evaluations) + " evaluations would add " +
              std::to_string(evaluations - 1) + " x " + std::to_string(cost) + " > " +
              std::to_string(kRecomputeBudget) + " units per element",
          count};
}

// ---- Gradient programs ----------------------------------------------------

bool is_backward(const Stmt& s) {
  return s.annotations.is_backward();
}

template <typename T>
void append(std::vector<T>& list, const std::vector<T>& items) {
  list.insert(list.end(), items.begin(), items.end());
}

class Fuser {
 public:
  explicit Fuser(Function& fn) : fn_(fn) {
    for (const ValuePtr& v : fn.outputs) outputs_.insert(v.get());
    for (const Stmt& s : fn.body) gradient_ |= is_backward(s);
  }

  void run() {
    block(Block{fn_.body, nullptr, outputs_});
    if (gradient_) record_saved();
  }

 private:
  void block(const Block& b) {
    std::vector<bool> removed(b.body.size(), false);
    const UseIndex index = index_uses(b.body);
    for (size_t i = 0; i < b.body.size(); ++i) {
      Stmt& s = b.body[i];
      if (s.kind == StmtKind::Loop) {
        block(Block{s.loop->body, s.loop.get(), outputs_});
        continue;
      }
      if (!element_wise(s.compute) || s.annotations.gemm || s.annotations.conv) continue;
      if (s.annotations.reshape) {  // a view of its source: inlined, it would gather instead
        kept_[s.compute.result.get()] = "reshape";
        continue;
      }
      Uses uses = find_uses(b, index, i);
      Decision d = decide(b, i, uses);
      if (d.inline_it) {
        inline_producer(b, i, uses, d.uses);
        removed[i] = true;
      } else {
        kept_[s.compute.result.get()] = d.why;
      }
    }
    std::vector<Stmt> kept;
    for (size_t i = 0; i < b.body.size(); ++i)
      if (!removed[i]) kept.push_back(std::move(b.body[i]));
    b.body = std::move(kept);
  }

  void inline_producer(const Block& b, size_t at, const Uses& uses, int64_t count) {
    const Stmt& producer = b.body[at];
    const Compute& p = producer.compute;
    const Expr value = producer_value(p);
    const std::string& name = p.result->name;
    for (const Reader& r : uses.readers) {
      Stmt& reader = b.body[r.stmt];
      Compute& c = reader.compute;
      c.body = transform(c.body, [&](const Expr& x) -> Expr {
        if (x->kind != ExprKind::Read || x->tensor.get() != p.result.get()) return nullptr;
        return value_at(p, value, x->indices);
      });
      if (r.as_init) {
        c.body = combine(c.op, value_at(p, value, plain_indices(c.out)), c.body);
        c.op = ReduceOp::None;
        c.init = nullptr;
      }
      ir::Annotations& notes = reader.annotations;
      append(notes.inlined, producer.annotations.inlined);
      append(notes.recomputed, producer.annotations.recomputed);
      if (gradient_ && !is_backward(producer) && is_backward(reader))
        notes.recomputed.push_back({name, count});
      else
        notes.inlined.push_back(name);
    }
  }

  /// Annotations::saved on each forward statement the backward half reads.
  void record_saved() {
    std::unordered_set<const Value*> read_by_backward;
    for (const Stmt& s : fn_.body)
      if (s.kind == StmtKind::Compute && is_backward(s)) collect_mentions(s, read_by_backward);
    for (Stmt& s : fn_.body) {
      if (s.kind != StmtKind::Compute || is_backward(s)) continue;
      const Value* v = s.compute.result.get();
      if (!read_by_backward.count(v)) continue;
      auto it = kept_.find(v);
      std::string why = it != kept_.end()             ? it->second
                        : plan_contraction(s.compute) ? "contraction"
                                                      : "reduction";
      s.annotations.saved = why;
    }
  }

  Function& fn_;
  std::set<const Value*> outputs_;
  bool gradient_ = false;
  std::map<const Value*, std::string> kept_;  // element-wise values kept, and why
};

}  // namespace

int64_t expression_cost(const Expr& e) {
  int64_t cost = 0;
  for_each_node(e, [&](const Expr& x) { cost += node_cost(*x); });
  return cost;
}

void fuse(Function& fn) {
  Fuser(fn).run();
}

}  // namespace tenet::passes
