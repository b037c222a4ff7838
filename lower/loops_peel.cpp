// A windowed reduction's border and interior (lower/peel.h): its last own
// loop split into the border, run with the body's tests, and the interior,
// run without them.
#include <string>

#include "lower/loop_builder.h"

namespace tenet::lower::detail {

void LoopBuilder::peeled(Cursor& out, StatementState& st) {
  const Scheduled& m = st.m;
  const ir::Compute& c = st.c;
  const size_t last = m.schedule.outer.back();
  const Var& var = st.out_vars[last];
  const passes::WindowBorder* columns = nullptr;  // the last loop's interior, if peeled
  std::vector<Node::Test> rows;                   // the other peeled loops' interior
  for (const passes::WindowBorder& l : m.peel->loops) {
    if (l.dim == last) {
      columns = &l;
      continue;
    }
    if (l.lo > l.begin) rows.push_back({st.out_vars[l.dim], true, l.lo});
    if (l.hi < l.end) rows.push_back({st.out_vars[l.dim], false, l.hi});
  }
  auto loop = [&](IndexExpr from, IndexExpr to, const GuardBounds& g) {
    out.open(for_node(var, std::move(from), std::move(to)));
    element(out, st, g);
    out.close();
  };
  const IndexExpr extent = ix::extent(c.result.get(), int(last));
  out.note(
      "Inside the window's borders every test of the body holds: the interior runs "
      "without them (lower/peel.h).");
  if (!rows.empty()) {
    Node test;
    test.kind = NodeKind::If;
    test.tests = rows;
    out.open(std::move(test));
  }
  if (columns) {
    if (columns->lo > columns->begin) loop(ix::constant(0), ix::constant(columns->lo), m.guard);
    loop(ix::constant(columns->lo), ix::constant(columns->hi), m.interior_guard);
    if (columns->hi < columns->end) loop(ix::constant(columns->hi), extent, m.guard);
  } else {
    loop(ix::constant(0), extent, m.interior_guard);
  }
  if (!rows.empty()) {
    out.open_else();
    loop(ix::constant(0), extent, m.guard);
    out.close();
  }
}

}  // namespace tenet::lower::detail
