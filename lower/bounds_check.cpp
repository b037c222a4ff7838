#include "lower/bounds_check.h"

#include <map>
#include <optional>

#include "ir/printer.h"
#include "support/checked.h"
#include "support/error.h"

namespace tenet::lower {

namespace {

struct Range {
  int64_t lo, hi;  // [lo, hi)
};
using Ranges = std::map<std::string, Range>;

std::string size_values(const ir::SizeBindings& sizes) {
  std::string out;
  for (const auto& [name, value] : sizes)
    out += (out.empty() ? "" : ", ") + name + " = " + std::to_string(value);
  return out;
}

void check_expr(const ir::Expr& e, const Ranges& ranges, const ir::SizeBindings& sizes,
                const std::string& statement) {
  if (e->kind == ir::ExprKind::Select) {
    // Only the condition is evaluated everywhere; each branch only where taken.
    check_expr(e->args[0], ranges, sizes, statement);
    return;
  }
  for (const auto& a : e->args) check_expr(a, ranges, sizes, statement);
  if (e->kind != ir::ExprKind::Read) return;
  for (const auto& c : e->computed)
    if (c) check_expr(c, ranges, sizes, statement);
  if (e->guarded) return;
  for (size_t d = 0; d < e->indices.size(); ++d) {
    if (e->is_computed(d)) continue;  // checked at run time (runtime/tenet_index.h)
    const ir::Affine& a = e->indices[d];
    // Checked: a wrapped 2*k would pass for an index inside the tensor.
    std::optional<int64_t> min = a.offset.eval(sizes), max = min;
    for (const auto& [index, coef] : a.terms) {
      const Range& r = ranges.at(index);
      auto low = checked_mul(coef, coef > 0 ? r.lo : r.hi - 1);
      auto high = checked_mul(coef, coef > 0 ? r.hi - 1 : r.lo);
      min = min && low ? checked_add(*min, *low) : std::nullopt;
      max = max && high ? checked_add(*max, *high) : std::nullopt;
    }
    const int64_t extent = e->tensor->shape[d].eval(sizes);
    if (min && max && *min >= 0 && *max < extent) continue;
    const std::string bad =
        !min || !max ? "a value beyond 64-bit integers" : std::to_string(*min < 0 ? *min : *max);
    throw BindError("out-of-bounds read " + ir::read_text(*e) + " in the statement defining '" +
                    statement + "': dimension " + std::to_string(d) + " index " + a.str() +
                    " reaches " + bad + ", outside [0, " + std::to_string(extent) + ") (" +
                    size_values(sizes) + ")");
  }
}

void check_block(const std::vector<ir::Stmt>& body, Ranges ranges, const ir::SizeBindings& sizes) {
  for (const ir::Stmt& s : body) {
    if (s.kind == ir::StmtKind::Loop) {
      Ranges inner = ranges;
      inner[s.loop->var] = Range{0, s.loop->trip};
      check_block(s.loop->body, inner, sizes);
      continue;
    }
    const ir::Compute& c = s.compute;
    Ranges inner = ranges;
    bool empty = false;
    for (const auto* dims : {&c.out, &c.reduce}) {
      for (const ir::Dim& d : *dims) {
        Range r{d.lo.eval(sizes), d.hi.eval(sizes)};
        empty = empty || r.hi <= r.lo;
        inner[d.index] = r;
      }
    }
    if (!empty) check_expr(c.body, inner, sizes, c.result->name);
  }
}

}  // namespace

void check_reads_in_bounds(const ir::Function& fn, const ir::SizeBindings& sizes) {
  check_block(fn.body, {}, sizes);
}

}  // namespace tenet::lower
