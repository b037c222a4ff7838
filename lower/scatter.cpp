#include "lower/scatter.h"

#include "ir/mutator.h"
#include "lower/lowered_function.h"

namespace tenet::lower {

void lower_scatters(LoweredFunction& f) {
  ir::for_each_stmt(f.function->body, [&](const ir::Stmt& s) {
    if (s.kind != ir::StmtKind::Compute || f.gemms.count(&s) || !f.liveness.live(s.compute)) return;
    if (auto form = index_scatter(s.compute)) f.scatters.emplace(&s, std::move(*form));
  });
}

}  // namespace tenet::lower
