/// \file
/// A vector-Jacobian program cut in two at the boundary between its halves:
/// a forward that also returns what the backward reads (the saved values), and a
/// backward that takes them instead of recomputing the forward. PyTorch's
/// autograd runs the two at different times (the forward when the operator is
/// called, the backward when the loss is differentiated), and a backward that
/// starts from the inputs alone would compute the forward a second time.
///
/// Expects: `g` as ad::differentiate made it in vjp mode (inputs: the
/// function's `inputs` inputs, then the cotangents; outputs: its `outputs`
/// outputs, then the gradients), optimised by the shared passes (passes/
/// pipeline.h: `fuse` has decided what the backward recomputes and what it
/// reads), made of Compute statements.
/// Guarantees: two verified functions over g's statements, each statement in
/// exactly one (those of AdOrigin::Backward in the backward, the others in the
/// forward), so that the backward of the forward's results computes g's
/// gradients bitwise (the same statements on the same values):
///   forward:  inputs  g's original inputs;
///             outputs g's original outputs (same names, updates kept), then one
///                     output per saved value: a value of the forward half that
///                     the backward reads and that is not already an output
///                     under a name of its own;
///   backward: inputs  g's original inputs (positions unchanged, so gradient
///                     marks keep their meaning), then the saved values (each
///                     named as the forward's output it is), then the cotangents;
///             outputs g's gradients (names and gradient marks kept).
/// The saved values are listed in `saved`: names of the forward's outputs, in
/// the order the backward takes them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ad/grad.h"
#include "ir/ir.h"

namespace tenet::ad {

/// "both", "forward", "backward".
const char* half_name(VjpHalf half);

struct SplitVjp {
  ir::Function forward;
  ir::Function backward;
  /// The forward's outputs the backward takes, in its order (after the original inputs).
  std::vector<std::string> saved;
};

/// `g` cut in two (see above); `inputs` and `outputs` count the original
/// function's inputs and outputs. Both halves keep g's name.
SplitVjp split_vjp(const ir::Function& g, size_t inputs, size_t outputs);

}  // namespace tenet::ad
