#include "passes/pipeline.h"

#include "ir/verify.h"
#include "passes/contraction.h"
#include "passes/dce.h"
#include "passes/fuse.h"
#include "passes/hoist.h"
#include "passes/index_split.h"
#include "passes/simplify.h"

namespace tenet::passes {

const std::vector<Pass>& pipeline() {
  static const std::vector<Pass> passes = {
      // Passes are registered here, in order (see passes/README.md). A target's
      // own passes (the CPU target's `schedule`) follow them: driver/target.h.
      {"simplify", "fold constants and exact algebraic identities", simplify},
      {"dce", "remove statements no output needs", dce},
      {"hoist", "move selects on out indices out of sum reductions", hoist},
      {"index_split", "split reductions where a select on a reduce index changes branch",
       index_split},
      {"contraction", "mark large A * B contractions for the GEMM library", contraction},
      {"fuse", "inline cheap element-wise statements into their readers (save or recompute)", fuse},
  };
  return passes;
}

}  // namespace tenet::passes
