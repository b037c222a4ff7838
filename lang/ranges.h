/// \file
/// Range inference for the indices of one statement (Tensor Comprehensions'
/// rule: each index gets the largest range for which every unguarded read is
/// in bounds), then a bounds check of every unguarded read. Part of the
/// checker; used by lower.cpp and unit-tested on its own.
///
/// Expects: the statement's index variables (with any `where` range or target
/// dimension given up front) and its reads, their index expressions in affine
/// form over the indices' IR names and enclosing loop variables.
/// Guarantees: on success every index has [lo, hi) with lo == 0 for left-side
/// indices, no range is provably empty, and no unguarded read leaves its
/// tensor for every size (a conditional read: wherever it is read); a note
/// was reported for each index that took the smaller range of its plain
/// uses. Otherwise errors were reported and it returns false.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/diagnostics.h"

namespace tenet::lang::detail {

/// One index variable of a statement.
struct RangeIndex {
  std::string name;     // as written, for messages
  std::string ir_name;  // as used in RangeRead::dims
  Span span;            // first occurrence
  bool on_lhs = false;
  // Given before inference (a where clause wins over the target dimension,
  // which must then agree with it):
  std::optional<std::pair<ir::SizeExpr, ir::SizeExpr>> where;
  Span where_span;
  std::optional<ir::SizeExpr> target_dim;  // a left index of an existing or declared tensor
  Span target_span;
  std::string target_what;  // "dimension 0 of 'b'"
  // The result:
  bool known = false;
  ir::SizeExpr lo, hi;
  Span origin;              // what fixed the range (for notes)
  std::string origin_what;  // "dimension 1 of 'x'", "the where clause", ...
};

/// One read T(e0, e1, ...) of the right side.
struct RangeRead {
  std::string tensor;
  std::vector<ir::SizeExpr> shape;
  bool guarded = false;
  bool conditional = false;      // in a branch of select or '?:': evaluated only where taken
  std::vector<ir::Affine> dims;  // one per index expression (0 where computed)
  /// Per index expression: computed (not affine: it reads an integer tensor,
  /// divides, ...). Such an index takes part in neither inference nor the
  /// bounds check: it is checked at run time.
  std::vector<bool> computed;
  std::vector<Span> spans;  // of each index expression
  Span span;                // of the whole read
};

/// Fills lo/hi/known of every index and checks the reads (see the file
/// comment). `loop_trips` gives the range [0, trip) of each enclosing loop
/// variable by IR name. Messages quote source text through diags.file().
bool infer_ranges(std::vector<RangeIndex>& indices, const std::vector<RangeRead>& reads,
                  const std::map<std::string, int64_t>& loop_trips, Diagnostics& diags);

/// True when e stays within +-2^32 for every choice of its symbols among 0
/// and 1: a cheap guard that keeps later int64 arithmetic from overflowing.
bool size_is_moderate(const ir::SizeExpr& e);

}  // namespace tenet::lang::detail
