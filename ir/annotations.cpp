#include "ir/annotations.h"

#include "ir/conv_plan.h"
#include "ir/gemm_plan.h"
#include "ir/ir.h"

namespace tenet::ir {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

std::vector<std::string> describe_annotations(const Stmt& s) {
  const Annotations& a = s.annotations;
  std::vector<std::string> out;
  if (a.ad != AdOrigin::None)
    out.push_back("ad: " + std::string(a.ad == AdOrigin::Unrolled ? "unrolled " : "") +
                  a.ad_detail);
  if (a.gemm) {
    const GemmPlan& p = *a.gemm;
    const std::string when =
        p.per_call_min_work == 0
            ? ""
            : " if " + p.work.str() + " >= " + std::to_string(p.per_call_min_work);
    out.push_back("gemm" + when + ": " + describe(p, s.compute));
  }
  if (a.conv) out.push_back("conv: " + describe(*a.conv, s.compute));
  std::vector<std::string> items;
  for (const std::string& v : a.inlined) items.push_back("%" + v);
  if (!items.empty()) out.push_back("inlined: " + join(items));
  items.clear();
  for (const Recomputed& r : a.recomputed)
    items.push_back("%" + r.value + " (" + std::to_string(r.uses) +
                    (r.uses == 1 ? " use)" : " uses)"));
  if (!items.empty()) out.push_back("recomputed: " + join(items));
  if (!a.saved.empty()) out.push_back("saved: " + a.saved);
  if (s.kind != StmtKind::Compute) return out;
  const Compute& c = s.compute;
  if (a.inner_loops > 0 && a.inner_loops <= c.out.size()) {
    items.clear();
    const size_t outer = c.out.size() - a.inner_loops;
    for (size_t p = 0; p < outer; ++p) items.push_back(c.out[p].index);
    for (const Dim& d : c.reduce) items.push_back(d.index);
    for (size_t p = outer; p < c.out.size(); ++p) items.push_back(c.out[p].index);
    out.push_back("order: " + join(items));
  }
  if (a.nest > 0 && a.nest <= c.out.size()) {
    items.clear();
    for (size_t p = 0; p < a.nest; ++p) items.push_back(c.out[p].index);
    out.push_back("nest: " + join(items));
  }
  if (a.jam > 0 && !c.out.empty())
    out.push_back("jam: " + c.out.back().index + " by " + std::to_string(a.jam));
  if (a.lanes > 0 && !c.reduce.empty())
    out.push_back("lanes: " + c.reduce.back().index + " by " + std::to_string(a.lanes));
  if (a.scan > 0 && a.scan <= c.out.size()) out.push_back("scan: " + c.out[a.scan - 1].index);
  return out;
}

}  // namespace tenet::ir
