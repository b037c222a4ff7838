#include "lower/liveness.h"

#include "ir/mutator.h"

namespace tenet::lower {

Liveness::Liveness(const ir::Function& fn) {
  for (const auto& v : fn.outputs) use(v);
  block(fn.body);
}

bool Liveness::live(const ir::Loop& l) const {
  for (const auto& c : l.carried)
    if (live(c)) return true;
  return false;
}

void Liveness::block(const std::vector<ir::Stmt>& body) {
  // Values are defined before they are read, so one backward sweep finds
  // every use of a value before reaching its definition.
  for (auto it = body.rbegin(); it != body.rend(); ++it) {
    if (it->kind == ir::StmtKind::Compute) {
      const ir::Compute& c = it->compute;
      if (!live(c)) continue;
      use(c.init);
      expr(c.body);
    } else {
      loop(*it->loop);
    }
  }
}

void Liveness::loop(const ir::Loop& l) {
  // A body value can feed an earlier body statement of the next iteration
  // through a carried parameter, so sweep until nothing new is used.
  size_t before;
  do {
    before = used_.size();
    for (const auto& c : l.carried) {
      if (!live(c)) continue;
      use(c.next);
      use(c.init);
    }
    block(l.body);
  } while (used_.size() != before);
}

void Liveness::expr(const ir::Expr& e) {
  for (const ir::Expr& read : ir::reads_of(e)) use(read->tensor);
}

}  // namespace tenet::lower
