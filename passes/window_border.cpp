// The borders of a windowed reduction (window_border.h).
#include "passes/window_border.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "ir/affine.h"
#include "ir/mutator.h"
#include "passes/index_facts.h"
#include "runtime/tenet_runtime.h"
#include "support/checked.h"

namespace tenet::passes {

namespace {

/// The tests of `body` as `f < 0`: the conjuncts of its selects' conditions,
/// and both bounds of each affine dimension of its guarded reads.
std::vector<ir::Affine> tests_of(const ir::Expr& body) {
  std::vector<ir::Affine> tests;
  ir::for_each_node(body, [&](const ir::Expr& e) {
    if (e->kind == ir::ExprKind::Select) {
      for (const ir::Expr& part : ir::conjuncts(e->args[0]))
        if (auto f = detail::as_negative_test(part)) tests.push_back(*f);
    } else if (e->kind == ir::ExprKind::Read && e->guarded) {
      for (size_t d = 0; d < e->indices.size(); ++d) {
        if (e->is_computed(d)) continue;
        const ir::Affine& a = e->indices[d];
        tests.push_back(-a - ir::affine_const(1));                   // a >= 0
        tests.push_back(a - ir::affine_const(e->tensor->shape[d]));  // a < extent
      }
    }
  });
  return tests;
}

}  // namespace

std::vector<WindowBorder> window_borders(const ir::Compute& c,
                                         const std::vector<size_t>& candidates) {
  if (c.op == ir::ReduceOp::None || c.reduce.empty()) return {};
  std::map<std::string, WindowBorder> by_index;
  for (size_t p : candidates) {
    const ir::Dim& d = c.out[p];
    const auto lo = d.lo.constant(), hi = d.hi.constant();
    if (lo && hi) by_index[d.index] = WindowBorder{p, *lo, *hi, *lo, *hi};
  }
  std::map<std::string, std::pair<int64_t, int64_t>> reduce;
  for (const ir::Dim& d : c.reduce) {
    const auto lo = d.lo.constant(), hi = d.hi.constant();
    if (lo && hi && *lo < *hi) reduce[d.index] = {*lo, *hi};
  }
  for (const ir::Affine& f : tests_of(c.body)) {
    // f = a * o + rest < 0 at every term: a * o + (the largest rest) < 0.
    const std::optional<int64_t> offset = f.offset.constant();
    if (!offset) continue;
    // (Constants of any size may reach here: a test whose arithmetic would
    // overflow is left in the body.)
    WindowBorder* o = nullptr;
    int64_t a = 0;
    std::optional<int64_t> rest = offset;
    for (const auto& [index, coef] : f.terms) {
      if (auto b = by_index.find(index); b != by_index.end() && o == nullptr) {
        o = &b->second, a = coef;
      } else if (auto r = reduce.find(index); r != reduce.end() && rest) {
        const int64_t at = coef > 0 ? r->second.second - 1 : r->second.first;
        const std::optional<int64_t> term = checked_mul(coef, at);
        rest = term ? checked_add(*rest, *term) : std::nullopt;
      } else {
        rest = std::nullopt;  // another index, or a second out index
      }
    }
    if (o == nullptr || !rest || *rest == INT64_MIN || a == INT64_MIN) continue;
    if (a > 0)
      o->hi = std::min(o->hi, tenet::ceildiv<int64_t>(-*rest, a));
    else
      o->lo = std::max(o->lo, tenet::floordiv<int64_t>(*rest, -a) + 1);
  }
  std::vector<WindowBorder> borders;
  for (size_t p : candidates)
    if (auto b = by_index.find(c.out[p].index); b != by_index.end())
      if (b->second.lo != b->second.begin || b->second.hi != b->second.end)
        borders.push_back(b->second);
  return borders;
}

bool worth_peeling(const std::vector<WindowBorder>& borders) {
  return !borders.empty() && std::all_of(borders.begin(), borders.end(), [](const WindowBorder& b) {
    return b.lo < b.hi && 2 * (b.hi - b.lo) >= b.end - b.begin;
  });
}

}  // namespace tenet::passes
