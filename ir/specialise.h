/// \file
/// A function specialised to some of its sizes: size parameters bound to
/// constants before anything is derived or optimised, so that every later
/// stage (AD, the passes' cost rules, the lowering, the generated loops)
/// sees the numbers. Tensor Comprehensions compiles for the sizes it is
/// called with for the same reason: which form of a contraction pays (one
/// GEMM over a packed factor, or a GEMM into columns and a col2im) can hinge
/// on a batch of 2 against one of 32, and constant trip counts let the C++
/// compiler unroll and vectorise.
///
/// Expects: a verified function. Guarantees: the same computation with each
/// bound parameter replaced by its value in every shape, range, affine
/// offset and size used as a value, and dropped from size_params; names,
/// spans, statement order, annotations and output marks unchanged. A size
/// that names no size parameter of the function, or is negative, is a
/// BindError; a shape or range that becomes negative is a BindError naming
/// the tensor or index (ir::check_sizes' messages, when every parameter is
/// bound).
#pragma once

#include "ir/ir.h"

namespace tenet::ir {

Function specialise_sizes(const Function& fn, const SizeBindings& sizes);

}  // namespace tenet::ir
