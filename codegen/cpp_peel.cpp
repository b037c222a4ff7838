// A windowed reduction's border and interior (lower/peel.h): its last own
// loop split into the border, run with the body's tests, and the interior,
// run without them.
#include <string>

#include "codegen/function_emitter.h"

namespace tenet::codegen::detail {

void FunctionEmitter::emit_peeled(Code& code, const Scheduled& m,
                                  const std::vector<std::string>& out_vars,
                                  const std::function<void(const GuardBounds&)>& element) {
  const ir::Compute& c = m.stmt->compute;
  const size_t last = m.schedule.outer.back();
  const std::string& var = out_vars[last];
  const TensorAccess& result = access(c.result);
  const passes::WindowBorder* columns = nullptr;  // the last loop's interior, if peeled
  std::string rows;                               // the other peeled loops' interior
  for (const passes::WindowBorder& l : m.peel->loops) {
    if (l.dim == last) {
      columns = &l;
      continue;
    }
    if (l.lo > l.begin)
      rows += (rows.empty() ? "" : " && ") + out_vars[l.dim] + " >= " + std::to_string(l.lo);
    if (l.hi < l.end)
      rows += (rows.empty() ? "" : " && ") + out_vars[l.dim] + " < " + std::to_string(l.hi);
  }
  auto loop = [&](const std::string& from, const std::string& to, const GuardBounds& g) {
    code.open("for (int64_t " + var + " = " + from + "; " + var + " < " + to + "; ++" + var + ")");
    element(g);
    code.close();
  };
  const std::string extent = result.dims[last];
  code.note(
      "Inside the window's borders every test of the body holds: the interior runs "
      "without them (lower/peel.h).");
  if (!rows.empty()) code.open("if (" + rows + ")");
  if (columns) {
    if (columns->lo > columns->begin) loop("0", std::to_string(columns->lo), m.guard);
    loop(std::to_string(columns->lo), std::to_string(columns->hi), m.interior_guard);
    if (columns->hi < columns->end) loop(std::to_string(columns->hi), extent, m.guard);
  } else {
    loop("0", extent, m.interior_guard);
  }
  if (!rows.empty()) {
    code.reopen("} else {");
    loop("0", extent, m.guard);
    code.close();
  }
}

}  // namespace tenet::codegen::detail
