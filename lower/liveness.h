/// \file
/// `Liveness`: which statements of a function contribute to its outputs, so
/// that no backend computes (or allocates) dead temporaries; the first stage
/// of lowering (lower/README.md).
///
/// Expects: a verified function. Guarantees: a Compute
/// is live iff its result is (transitively) needed by an output; a carried
/// tensor of a loop is live iff its result is needed after the loop or its
/// parameter is read by a live statement of the body; a loop is live iff one
/// of its carried tensors is.
#pragma once

#include <set>

#include "ir/ir.h"

namespace tenet::lower {

class Liveness {
 public:
  Liveness() = default;
  explicit Liveness(const ir::Function& fn);

  bool used(const ir::ValuePtr& v) const { return v && used_.count(v.get()) != 0; }
  bool live(const ir::Compute& c) const { return used(c.result); }
  bool live(const ir::Loop::Carried& c) const { return used(c.result) || used(c.param); }
  bool live(const ir::Loop& loop) const;

 private:
  void block(const std::vector<ir::Stmt>& body);
  void loop(const ir::Loop& l);
  void expr(const ir::Expr& e);
  void use(const ir::ValuePtr& v) {
    if (v) used_.insert(v.get());
  }

  std::set<const ir::Value*> used_;
};

}  // namespace tenet::lower
