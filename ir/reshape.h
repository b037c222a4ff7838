/// \file
/// Reshapes (the language's `y = reshape(x, sizes...)`, PyTorch's view and
/// reshape of a contiguous tensor): y holds x's elements in row-major order
/// with another shape of the same element count.
///
/// A reshape is an ordinary Compute statement `y(out) = x(...)` whose read
/// maps each position of y to the position of x with the same row-major
/// offset (reshape_read), marked `Annotations::reshape`. The mark tells AD
/// to write the adjoint as a reshape of d_y (a gather, never a scatter),
/// `fuse` to keep the statement, and code generators that every index of the
/// read is in bounds by construction (verify.h checks the form); the
/// interpreter needs no mark: the read is the whole meaning.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace tenet::ir {

/// Whether two shapes have the same number of elements for every value of
/// the size parameters: their products are equal as polynomials over the
/// size symbols (floor divisions, min and max taken as opaque atoms).
bool same_element_count(const std::vector<SizeExpr>& a, const std::vector<SizeExpr>& b);

/// The element count of `shape` as an expanded polynomial, for messages:
/// "B*9216", "N*T*D + T*D", "1".
std::string element_count_text(const std::vector<SizeExpr>& shape);

/// The read of `source` at the row-major position of the point `out` of the
/// result (out[d] over [0, shape[d])), for a result shape with the same
/// element count. Dimensions that match one to one between the shapes keep
/// plain indices; a merge or split of a run of dimensions (equal partial
/// products) linearises that run of result indices and takes it apart with
/// `/` and `%`, which become computed indices unless affine.
Expr reshape_read(const ValuePtr& source, const std::vector<Dim>& out);

}  // namespace tenet::ir
