/// \file
/// The forward half of a gradient function (internal to ad/): the original
/// statements re-emitted into a FunctionBuilder, with every Loop unrolled.
///
/// Loops have constant trip counts, so iteration k of `for it in 0:n` becomes
/// a copy of the body with `it` replaced by k, its carried parameters by the
/// previous iteration's values (or the loop's inits) and its values named
/// `<name>_<it><k>`. Each copy is annotated `ad = "unrolled it=k"`. Every
/// iteration's values therefore stay available to the backward statements:
/// this is AD's tape, in plain SSA values the memory planner can reuse (see
/// ad/README.md for why unrolling rather than a stacked tape plus a reverse
/// loop). Statements outside loops keep their names, sources and attributes.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/ir.h"

namespace tenet::ad {

/// One emitted forward statement, as the reverse walk needs it.
struct ForwardStmt {
  ir::Compute compute;  // with the gradient function's values
  Span span;
  std::string source;
  bool reshape = false;  // Annotations::reshape: the adjoint is a reshape too
};

struct ForwardCopy {
  std::vector<ForwardStmt> stmts;  // in execution order
  /// Every value of the original function visible at top level (inputs,
  /// statement results, loop results) -> its value in the gradient function.
  std::map<const ir::Value*, ir::ValuePtr> values;
};

/// Raises a user error at a span (throws; never returns).
using FailAt = std::function<void(Span, const std::string&)>;

/// Upper bound on the statements unrolling may produce.
constexpr size_t kMaxUnrolledStatements = 20000;

/// Re-emits `fn`'s body into `fb`. `inputs` maps fn's inputs to fb's inputs.
/// A loop nest that would unroll past kMaxUnrolledStatements is a user error
/// at the loop's span. With `float_type`, every float value, constant and
/// cast becomes that type (gradcheck's float64 copy of a function).
ForwardCopy copy_forward(const ir::Function& fn, ir::FunctionBuilder& fb,
                         const std::map<const ir::Value*, ir::ValuePtr>& inputs, const FailAt& fail,
                         std::optional<ElemType> float_type = std::nullopt);

}  // namespace tenet::ad
