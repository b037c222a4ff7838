#include "ad/body_adjoint.h"

#include <map>
#include <string>

#include "ad/expr_util.h"
#include "ad/rules.h"
#include "ir/builder.h"
#include "ir/mutator.h"
#include "ir/printer.h"

namespace tenet::ad {

using ir::Expr;
using ir::ExprKind;

namespace {

// The group a read belongs to: its tensor and its index list.
std::string group_key(const Expr& read) {
  std::string key = std::to_string(read->tensor->id) + ":";
  for (size_t d = 0; d < read->indices.size(); ++d)
    key += (read->is_computed(d) ? ir::print(read->computed[d]) : read->indices[d].str()) + ",";
  return key;
}

bool is_wanted_read(const Expr& e, const WantsGradient& wanted) {
  return e->kind == ExprKind::Read && is_float(e->type) && wanted(*e->tensor);
}

// Whether a gradient flowing into `e` reaches a wanted read.
bool reaches_wanted(const Expr& e, const WantsGradient& wanted) {
  if (is_wanted_read(e, wanted)) return true;
  for (size_t i = 0; i < e->args.size(); ++i)
    if (carries_gradient(e, i) && reaches_wanted(e->args[i], wanted)) return true;
  return false;
}

// `e` with every read guarded (0 out of bounds): a branch of a select, whose
// reads the forward evaluates only where the branch is taken (TC's rule, so
// they may be out of bounds elsewhere), as the backward reuses them: its
// contributions are multiplied by select(c, d, 0), evaluated everywhere.
// `originals` maps each guarded copy back to the read it copies.
class GuardReads : public ir::ExprMutator {
 public:
  explicit GuardReads(std::map<const ir::ExprNode*, Expr>& originals) : originals_(originals) {}

 protected:
  Expr mutate_read(const Expr& e) override {
    std::vector<Expr> computed;
    for (const Expr& c : e->computed) computed.push_back(c ? mutate(c) : nullptr);
    Expr guarded = ir::make_read(e->tensor, e->indices, std::move(computed), true);
    auto it = originals_.find(e.get());
    originals_[guarded.get()] = it == originals_.end() ? e : it->second;
    return guarded;
  }

 private:
  std::map<const ir::ExprNode*, Expr>& originals_;
};

class Walker {
 public:
  explicit Walker(const WantsGradient& wanted) : wanted_(wanted) {}

  // `adjoint` null: only discover the groups.
  void visit(const Expr& e, const Expr& self, const Expr& adjoint) {
    if (is_wanted_read(e, wanted_)) {
      std::string key = group_key(e);
      auto [it, fresh] = index_.try_emplace(key, groups_.size());
      if (fresh) {
        auto original = originals_.find(e.get());  // as the forward reads it
        groups_.push_back({original == originals_.end() ? e : original->second, adjoint});
      } else if (adjoint)
        groups_[it->second].adjoint = add(groups_[it->second].adjoint, adjoint);
      return;
    }
    std::vector<Expr> operands;
    if (adjoint) operands = operand_adjoints(e, self, adjoint);
    for (size_t i = 0; i < e->args.size(); ++i) {
      if (!carries_gradient(e, i) || !reaches_wanted(e->args[i], wanted_)) continue;
      const Expr arg =
          e->kind == ExprKind::Select ? GuardReads(originals_).mutate(e->args[i]) : e->args[i];
      visit(arg, arg, adjoint ? operands[i] : nullptr);
    }
  }

  std::vector<ReadAdjoint> groups_;

 private:
  const WantsGradient& wanted_;
  std::map<std::string, size_t> index_;
  std::map<const ir::ExprNode*, Expr> originals_;  // guarded branch reads (GuardReads)
};

}  // namespace

std::vector<Expr> differentiable_reads(const Expr& body, const WantsGradient& wanted) {
  Walker w(wanted);
  w.visit(body, body, nullptr);
  std::vector<Expr> reads;
  for (const ReadAdjoint& g : w.groups_) reads.push_back(g.read);
  return reads;
}

std::vector<ReadAdjoint> read_adjoints(const Expr& body, const Expr& root_value, const Expr& seed,
                                       const WantsGradient& wanted) {
  Walker w(wanted);
  w.visit(body, root_value, seed);
  return std::move(w.groups_);
}

}  // namespace tenet::ad
