/// \file
/// The unparser: prints an IR function as source in the Tenet language, so a
/// user can read what the compiler derived (`tenet print FILE --grad FN`).
///
/// Expects: a verified ir::Function (from the checker, from AD, or after any
/// pass). Guarantees: text that lang::compile_source accepts and that checks
/// into a function computing the same outputs, in the same order, from the
/// same inputs (positionally), up to the order of floating-point sums where
/// the checker orders reduce indices differently from the IR:
///   - one statement per Compute, `T(i, j) = e`, `+=!`, `max=!`, `min=!`;
///     an accumulation (`init`) is `T(i) += e` when the updated version is not
///     needed afterwards, else spelled out (`T(i) = T0(i) + e`, or a copy and
///     `+=`, or `fmax(T0(i), Tm(i))` for a max/min);
///   - `where` clauses only for the indices whose ranges the checker would not
///     infer by itself (it runs the checker's own range inference to decide);
///   - loops as `for it in 0:T { ... }` with carried tensors reassigned
///     (copies are added where the IR's values cannot share one name);
///   - value names made valid and unique (`d_x.1` -> `d_x_1`), clear of
///     keywords, type names, builtins, size parameters and indices;
///   - each statement's source and attributes as `#` comment lines above it
///     (`# backward: ...`, `# ad: gather for x(...)`), unless the source is
///     the printed statement itself.
/// An input whose shape has a dimension that is not a name or a constant
/// (`H - KH + 1`, e.g. a cotangent of a convolution) is declared with a fresh
/// size name, explained in a comment above the `def`.
/// Throws CompileError ("error: cannot print ... as source: ...") for the few
/// IR forms the language cannot spell (a min/max size expression in a range
/// that inference does not reproduce).
#pragma once

#include <string>

#include "ir/ir.h"

namespace tenet::lang {

struct UnparseOptions {
  /// Print each statement's source and attributes as comments.
  bool comments = true;
};

std::string unparse(const ir::Function& fn, const UnparseOptions& options = {});

}  // namespace tenet::lang
