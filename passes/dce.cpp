#include "passes/dce.h"

#include <algorithm>
#include <set>

#include "ir/mutator.h"

namespace tenet::passes {

using namespace ir;

namespace {

// Values some output needs. Marking only ever adds, so one set serves the
// whole function even while loops are revisited until nothing changes.
using Live = std::set<const Value*>;

void mark_expr(const Expr& e, Live& live) {
  for (const Expr& read : reads_of(e)) live.insert(read->tensor.get());
}

bool carried_needed(const Loop::Carried& c, const Live& live) {
  return live.count(c.result.get()) || (c.param && live.count(c.param.get()));
}

void mark_block(const std::vector<Stmt>& body, Live& live);

// A carried tensor's next value feeds the following iteration's param, so the
// body is marked again until no new param or next becomes live.
void mark_loop(const Loop& loop, Live& live) {
  for (;;) {
    size_t before = live.size();
    for (const Loop::Carried& c : loop.carried) {
      if (!carried_needed(c, live)) continue;
      live.insert(c.next.get());
      if (c.init) live.insert(c.init.get());
    }
    mark_block(loop.body, live);
    if (live.size() == before) return;
  }
}

void mark_block(const std::vector<Stmt>& body, Live& live) {
  for (auto s = body.rbegin(); s != body.rend(); ++s) {
    if (s->kind == StmtKind::Loop) {
      mark_loop(*s->loop, live);
    } else if (live.count(s->compute.result.get())) {
      mark_expr(s->compute.body, live);
      if (s->compute.init) live.insert(s->compute.init.get());
    }
  }
}

void sweep_block(std::vector<Stmt>& body, const Live& live) {
  std::vector<Stmt> kept;
  for (Stmt& s : body) {
    if (s.kind == StmtKind::Compute) {
      if (live.count(s.compute.result.get())) kept.push_back(std::move(s));
      continue;
    }
    Loop& loop = *s.loop;
    auto dead = [&](const Loop::Carried& c) { return !carried_needed(c, live); };
    loop.carried.erase(std::remove_if(loop.carried.begin(), loop.carried.end(), dead),
                       loop.carried.end());
    if (loop.carried.empty()) continue;
    sweep_block(loop.body, live);
    kept.push_back(std::move(s));
  }
  body = std::move(kept);
}

}  // namespace

void dce(Function& fn) {
  Live live;
  for (const ValuePtr& v : fn.outputs) live.insert(v.get());
  mark_block(fn.body, live);
  sweep_block(fn.body, live);
}

}  // namespace tenet::passes
