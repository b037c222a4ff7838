/// \file
/// Stage `lower_conv`: each live statement with a convolution plan
/// (ir/conv_plan.h, from the `contraction` pass) as one call of a
/// convolution library: the problem, the operands in the call's order, the
/// result, and the tensor its sum starts from (added after the call, by
/// loops of the loop tree). Backends print the call from this and nothing
/// else (the C++ backend: runtime/tenet_conv.h; a GPU backend: cuDNN).
///
/// For every backend (lower/README.md). Expects: find_liveness has run.
/// Guarantees: a lowering for every live statement with a plan, at any
/// depth; operands are tensors the statement reads (rank 4, as the plan's
/// problem states them).
#pragma once

#include <array>
#include <map>
#include <string>

#include "ir/conv_plan.h"
#include "ir/ir.h"

namespace tenet::lower {

struct ConvLowering {
  ir::ConvPlan plan;  // the role and the problem (sizes, stride, padding, groups)
  /// The call's operands, in its order: forward (image, filter), backward
  /// data (gradient, filter), backward weights (image, gradient).
  std::array<const ir::Value*, 2> operands{};
  const ir::Value* result = nullptr;
  /// The sum's start (Compute::init), added to the library's result; null when none.
  const ir::Value* start = nullptr;
  std::string description;  // "y[b, o | i, j] = conv(x, w), stride 2" (ir::describe)
};

struct LoweredFunction;  // lowered_function.h

/// The stage: LoweredFunction::convs.
void lower_convs(LoweredFunction& lowered);

}  // namespace tenet::lower
