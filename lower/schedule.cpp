// The loop schedule of a statement, from the `schedule` pass's annotations (schedule.h).
#include "lower/schedule.h"

#include <optional>

#include "ir/scatter_form.h"
#include "support/error.h"

namespace tenet::lower {

LoopSchedule loop_schedule(const ir::Stmt& s) {
  const ir::Compute& c = s.compute;
  const size_t inner = s.annotations.inner_loops;
  TENET_ASSERT(inner == 0 || (!c.reduce.empty() && inner <= c.out.size()),
               "statement " << c.result->name << ": " << inner
                            << " out loops inside its reduction is not a loop order");
  LoopSchedule out;
  const size_t scan = s.annotations.scan;
  TENET_ASSERT(scan == 0 || (inner == 0 && scan <= c.out.size() && c.reduce.size() == 1),
               "statement " << c.result->name << ": scan = " << scan
                            << " needs a reduction over one index in the default order");
  for (size_t p = 0; p < c.out.size(); ++p)
    if (p + 1 != scan) (p + inner < c.out.size() ? out.outer : out.inner).push_back(p);
  if (scan > 0) out.outer.push_back(scan - 1);  // innermost: lower/loops_scan.cpp
  out.shared = shared_loops(s);
  TENET_ASSERT(out.shared <= out.outer.size(),
               "statement " << c.result->name << " shares " << out.shared
                            << " loops, more than it has outside its reduction");
  out.jam = s.annotations.jam;
  if (out.jam > 0) {
    const std::optional<int64_t> extent =
        c.out.empty() ? std::nullopt : c.out.back().extent().constant();
    TENET_ASSERT(inner == 0 && c.op != ir::ReduceOp::None && !c.reduce.empty() && extent &&
                     *extent % out.jam == 0,
                 "statement " << c.result->name << ": jam = " << out.jam
                              << " needs a reduction in the default order whose last out loop "
                                 "has a constant multiple of it as extent");
  }
  out.lanes = s.annotations.lanes;
  TENET_ASSERT(out.lanes == 0 || (inner == 0 && out.jam == 0 && ir::may_run_in_lanes(c)),
               "statement " << c.result->name << ": lanes = " << out.lanes
                            << " needs a max, min or float32 sum reduction in the default order");
  return out;
}

size_t shared_loops(const ir::Stmt& s) {
  return s.kind == ir::StmtKind::Compute ? s.annotations.nest : 0;
}

}  // namespace tenet::lower
