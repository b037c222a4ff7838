// Border peeling of a windowed reduction (peel.h).
#include "lower/peel.h"

#include "passes/index_facts.h"
#include "passes/window_border.h"

namespace tenet::lower {

std::optional<Peel> border_peel(const ir::Compute& c, const LoopSchedule& schedule) {
  if (schedule.jam > 0 || schedule.lanes > 0 || !schedule.inner.empty() ||
      schedule.outer.size() <= schedule.shared)
    return std::nullopt;
  const std::vector<size_t> own(schedule.outer.begin() + std::ptrdiff_t(schedule.shared),
                                schedule.outer.end());
  const std::vector<passes::WindowBorder> borders = passes::window_borders(c, own);
  if (!passes::worth_peeling(borders)) return std::nullopt;
  Peel peel;
  passes::detail::IndexFacts facts;
  for (const ir::Dim& d : c.reduce) facts.add_range(d.index, d.lo, d.hi);
  for (const ir::Dim& d : c.out) {
    bool peeled = false;
    for (const passes::WindowBorder& b : borders)
      if (c.out[b.dim].index == d.index) facts.add_range(d.index, b.lo, b.hi), peeled = true;
    if (!peeled) facts.add_range(d.index, d.lo, d.hi);
  }
  for (const passes::WindowBorder& b : borders)
    peel.loops.push_back(PeeledLoop{b.dim, b.begin, b.end, b.lo, b.hi});
  peel.interior = passes::detail::refine(c.body, facts);
  return peel;
}

}  // namespace tenet::lower
