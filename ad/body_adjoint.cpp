#include "ad/body_adjoint.h"

#include <map>
#include <string>

#include "ad/expr_util.h"
#include "ad/rules.h"
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

class Walker {
 public:
  explicit Walker(const WantsGradient& wanted) : wanted_(wanted) {}

  // `adjoint` null: only discover the groups.
  void visit(const Expr& e, const Expr& self, const Expr& adjoint) {
    if (is_wanted_read(e, wanted_)) {
      std::string key = group_key(e);
      auto [it, fresh] = index_.try_emplace(key, groups_.size());
      if (fresh)
        groups_.push_back({e, adjoint});
      else if (adjoint)
        groups_[it->second].adjoint = add(groups_[it->second].adjoint, adjoint);
      return;
    }
    std::vector<Expr> operands;
    if (adjoint) operands = operand_adjoints(e, self, adjoint);
    for (size_t i = 0; i < e->args.size(); ++i) {
      if (!carries_gradient(e, i) || !reaches_wanted(e->args[i], wanted_)) continue;
      visit(e->args[i], e->args[i], adjoint ? operands[i] : nullptr);
    }
  }

  std::vector<ReadAdjoint> groups_;

 private:
  const WantsGradient& wanted_;
  std::map<std::string, size_t> index_;
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
