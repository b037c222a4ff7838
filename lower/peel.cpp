// Border peeling of a windowed reduction (peel.h).
#include "lower/peel.h"

#include "passes/index_facts.h"

namespace tenet::lower {

std::optional<Peel> border_peel(const ir::Compute& c, const LoopSchedule& schedule) {
  if (schedule.jam > 0 || schedule.lanes > 0 || !schedule.inner.empty() ||
      schedule.outer.size() <= schedule.shared)
    return std::nullopt;
  const std::vector<size_t> own(schedule.outer.begin() + std::ptrdiff_t(schedule.shared),
                                schedule.outer.end());
  Peel peel;
  peel.loops = passes::window_borders(c, own);
  if (!passes::worth_peeling(peel.loops)) return std::nullopt;
  passes::detail::IndexFacts facts;
  for (const ir::Dim& d : c.reduce) facts.add_range(d.index, d.lo, d.hi);
  for (const ir::Dim& d : c.out) facts.add_range(d.index, d.lo, d.hi);
  for (const passes::WindowBorder& b : peel.loops)  // several bounds: the tightest hold
    facts.add_range(c.out[b.dim].index, b.lo, b.hi);
  peel.interior = passes::detail::refine(c.body, facts);
  return peel;
}

}  // namespace tenet::lower
