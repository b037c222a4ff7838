/// \file
/// A function's float64 (or float32) twin: the same computation with every
/// float input, value, constant and cast in another float type. Used by
/// gradcheck (finite differences need float64) and by the Python package
/// (float64 calls of a float32 program).
///
/// Expects: a verified function. Guarantees: the twin has the same name, size
/// parameters, input and output names and shapes; integer and boolean values
/// keep their types. Loops come out unrolled (AD's forward copy re-emits the
/// body), which computes the same values. A loop too long to unroll is a
/// CompileError at the loop's span.
#pragma once

#include "ir/ir.h"

namespace tenet::ad {

ir::Function with_float_type(const ir::Function& fn, ElemType float_type);

}  // namespace tenet::ad
