// The loop nests of a block (nests.h).
#include "lower/nests.h"

#include <algorithm>
#include <limits>

#include "lower/lowered_function.h"
#include "lower/schedule.h"

namespace tenet::lower {

bool runs_as_loops(const ir::Stmt& s, const LoweredFunction& lowered) {
  return s.kind == ir::StmtKind::Compute && !lowered.gemms.count(&s) && !lowered.convs.count(&s) &&
         !lowered.scatters.count(&s) && !lowered.memory.views.count(s.compute.result.get());
}

std::vector<std::vector<NestMember>> nests_of(const std::vector<ir::Stmt>& body,
                                              const LoweredFunction& lowered) {
  std::vector<std::vector<NestMember>> nests;
  size_t shared = 0;      // loops every statement since the last live one shares
  bool nestable = false;  // the last live statement can be followed in its nest
  for (const ir::Stmt& s : body) {
    const bool loops = runs_as_loops(s, lowered);
    shared = std::min(shared, loops ? shared_loops(s) : size_t(0));
    const bool live = s.kind == ir::StmtKind::Compute ? lowered.liveness.live(s.compute)
                                                      : lowered.liveness.live(*s.loop);
    if (!live) continue;
    const size_t member_shared = nestable && loops ? shared : 0;
    if (member_shared == 0) nests.emplace_back();
    nests.back().push_back(NestMember{&s, member_shared});
    nestable = loops;
    shared = std::numeric_limits<size_t>::max();
  }
  return nests;
}

}  // namespace tenet::lower
