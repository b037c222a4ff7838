/// \file
/// Canonical IR functions built with the builders, shared by the printer,
/// parser and pass tests. Each covers a slice of the IR: element-wise math,
/// every reduction (with and without init), affine and guarded reads,
/// select/cast/comparisons, scalars, loops with carried tensors and live-outs.
#pragma once

#include "ir/builder.h"
#include "ir/ir.h"

namespace tenet::ir::samples {

/// squash: a sum reduction and element-wise math with float constants.
Function squash();
/// softmax over the last dimension: max and sum reductions, exp.
Function softmax();
/// A stride-2 convolution: affine reads (2*i + ki) and a (H - K) / 2 + 1 shape.
Function conv_stride2();
/// Guarded reads (x?[i - 1]), min/max/sum reductions with init, a symbolic
/// offset and an unused size parameter.
Function stencil();
/// select, casts, comparisons, logic, Index and Size values, int tensors, a scalar.
Function mixed_types();
/// Routing-style loop: carried tensors (one unchanged), a live-out, a nested loop.
Function routing();
/// Layouts, attributes, multi-line source text and names that need quoting.
Function annotated();

/// Every sample above, in that order, as one module.
Module all();

}  // namespace tenet::ir::samples
