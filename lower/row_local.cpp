// The temporaries a nest keeps a row at a time (row_local.h).
#include "lower/row_local.h"

#include <algorithm>
#include <string>
#include <vector>

#include "ir/mutator.h"
#include "lower/lowered_function.h"
#include "lower/nests.h"
#include "lower/schedule.h"
#include "support/types.h"

namespace tenet::lower {
namespace {

/// Where each value is used: the statements whose body reads it (once per
/// statement, in order), and the values something else holds: a sum's
/// start, a loop's carried values.
struct Uses {
  std::map<const ir::Value*, std::vector<const ir::Stmt*>> readers;
  std::set<const ir::Value*> pinned;

  void block(const std::vector<ir::Stmt>& body) {
    for (const ir::Stmt& s : body) {
      if (s.kind == ir::StmtKind::Loop) {
        for (const auto& c : s.loop->carried)
          for (const ir::Value* v : {c.init.get(), c.param.get(), c.next.get(), c.result.get()})
            if (v) pinned.insert(v);
        block(s.loop->body);
        continue;
      }
      if (s.compute.init) pinned.insert(s.compute.init.get());
      for (const ir::Expr& r : ir::reads_of(s.compute.body)) {
        std::vector<const ir::Stmt*>& list = readers[r->tensor.get()];
        if (list.empty() || list.back() != &s) list.push_back(&s);
      }
    }
  }
};

class Finder {
 public:
  Finder(const LoweredFunction& lowered, const std::set<const ir::Value*>& in_callers_buffer)
      : lowered_(lowered), in_callers_buffer_(in_callers_buffer) {
    const ir::Function& fn = *lowered.function;
    for (const ir::ValuePtr& v : fn.outputs) uses_.pinned.insert(v.get());
    uses_.block(fn.body);
  }

  std::map<const ir::Value*, RowLocal> run() {
    block(lowered_.function->body);
    return std::move(found_);
  }

 private:
  void block(const std::vector<ir::Stmt>& body) {
    for (const std::vector<NestMember>& nest : nests_of(body, lowered_)) {
      // A jammed member's run opens its loop by tiles, where no row is declared.
      const bool jammed =
          nest.size() > 1 && std::any_of(nest.begin(), nest.end(), [](const NestMember& m) {
            return loop_schedule(*m.stmt).jam > 0;
          });
      if (nest.size() > 1 && !jammed) {
        const Positions at(nest);
        for (size_t a = 0; a + 1 < nest.size(); ++a) consider(nest, at, a);
      }
      for (const NestMember& m : nest)
        if (m.stmt->kind == ir::StmtKind::Loop) block(m.stmt->loop->body);
    }
  }

  /// Each member's position, and the fewest loops the members of a range
  /// share (a sparse table: linear in the nest's size to build, log to
  /// build per level, constant to ask; a nest can hold thousands).
  struct Positions {
    std::map<const ir::Stmt*, size_t> of;
    std::vector<std::vector<size_t>> min_shared;  // [level][k]: members k..k+2^level-1

    explicit Positions(const std::vector<NestMember>& nest) {
      for (size_t k = 0; k < nest.size(); ++k) of[nest[k].stmt] = k;
      min_shared.emplace_back();
      for (const NestMember& m : nest) min_shared[0].push_back(m.shared);
      for (size_t width = 2; width <= nest.size(); width *= 2) {
        const std::vector<size_t>& half = min_shared.back();
        std::vector<size_t> level;
        for (size_t k = 0; k + width <= nest.size(); ++k)
          level.push_back(std::min(half[k], half[k + width / 2]));
        min_shared.push_back(std::move(level));
      }
    }
    /// The fewest loops shared by members first..last (first <= last).
    size_t shared(size_t first, size_t last) const {
      size_t level = 0;
      while ((size_t(2) << level) <= last - first + 1) ++level;
      return std::min(min_shared[level][first], min_shared[level][last + 1 - (size_t(1) << level)]);
    }
  };

  void consider(const std::vector<NestMember>& nest, const Positions& positions, size_t a) {
    const ir::Stmt& def = *nest[a].stmt;
    const ir::ValuePtr& t = def.compute.result;
    if (in_callers_buffer_.count(t.get()) || uses_.pinned.count(t.get()) || !t->layout.empty())
      return;
    auto readers = uses_.readers.find(t.get());
    if (readers == uses_.readers.end()) return;
    // Every reader a later member of this nest.
    size_t last = a;
    for (const ir::Stmt* r : readers->second) {
      auto at = positions.of.find(r);
      if (at == positions.of.end() || at->second <= a) return;
      last = std::max(last, at->second);
    }
    const size_t depth = positions.shared(a + 1, last);
    if (depth == 0) return;
    const LoopSchedule own = loop_schedule(def);
    if (depth > own.outer.size()) return;  // (the schedule shares only its own outer loops)
    const std::vector<size_t> shared_dims(own.outer.begin(), own.outer.begin() + long(depth));
    // Each read at the current iteration of those loops: the reader's own
    // indices of them, plainly.
    for (const ir::Stmt* r : readers->second) {
      const LoopSchedule theirs = loop_schedule(*r);
      for (const ir::Expr& read : ir::reads_of(r->compute.body, t.get())) {
        if (read->guarded || read->has_computed_index()) return;
        for (size_t q = 0; q < depth; ++q) {
          const ir::Affine& index = read->indices[shared_dims[q]];
          if (!index.is_plain_var() ||
              index.terms[0].first != r->compute.out[theirs.outer[q]].index)
            return;
        }
      }
    }
    const int64_t most = kMaxRowLocalBytes / int64_t(byte_size(t->type));
    int64_t elements = 1;
    for (size_t d = 0; d < t->shape.size(); ++d) {
      if (std::find(shared_dims.begin(), shared_dims.end(), d) != shared_dims.end()) continue;
      const std::optional<int64_t> extent = t->shape[d].constant();
      if (!extent || *extent < 1 || *extent > most || elements * *extent > most) return;
      elements *= *extent;
    }
    found_[t.get()] = RowLocal{depth, shared_dims, elements};
  }

  const LoweredFunction& lowered_;
  const std::set<const ir::Value*>& in_callers_buffer_;
  Uses uses_;
  std::map<const ir::Value*, RowLocal> found_;
};

}  // namespace

std::map<const ir::Value*, RowLocal> find_row_locals(
    const LoweredFunction& lowered, const std::set<const ir::Value*>& in_callers_buffer) {
  return Finder(lowered, in_callers_buffer).run();
}

}  // namespace tenet::lower
