/// \file
/// The col2im decision: whether the gather of a split statement (col2im,
/// passes/contraction_split.h) can run as a scatter of contiguous windows
/// rather than as a loop nest, and in which form. Part of lower_gemms
/// (GemmLowering::scatter); a backend prints the form.
///
/// The split's gather reads its columns through a guard,
///
///     dx(b, c, h, w) +=! cols?(b, i, j, c, h - 2*i, w - 2*j)      (sum over i, j)
///
/// and as a loop nest it spends most of its time on index arithmetic and on
/// a strided read per element. Each (i, j) adds a dense window of the columns
/// to a window of dx, so this emits, per value of the out indices that the
/// columns read plainly (b, c), dx = init (or 0) followed by, for each (i, j)
/// in the gather's order, the window added row by row, both sides unit-stride
/// in the innermost index, with the window's bounds computed once per (i, j):
///
///     for (i) for (j) for (k_h in window) for (k_w in window)
///       dx(b, c, k_h + 2*i, k_w + 2*j) += cols(b, i, j, c, k_h, k_w)
///
/// Each element of dx still receives its terms one at a time in the gather's
/// order (i, j ascending: the window index determines the element), so the
/// sum is the loop nest's, bit for bit, and it does not depend on the number
/// of threads (threads split b and c only). Gathers of another form (an out
/// index with a coefficient other than 1, or in two guarded dimensions; a
/// range not starting at 0) keep the loop nest.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tenet::lower {

/// A guarded dimension of the columns: index `window` (fresh) runs over the
/// dimension, and writes the result's out index `out` at window - `shift`
/// (the rest of the read's affine index: reduce indices and a constant).
struct WindowDim {
  int cols_dim = 0;
  std::string out;
  ir::Affine shift;
};

/// The scatter form of a split's gather, or nullopt when it has none.
struct ScatterForm {
  std::vector<ir::Dim> free;       // out indices read plainly, in the result's order
  std::vector<WindowDim> windows;  // in the result's storage order of their out index
};

/// The scatter form of a split's gather, or nullopt when it has none (the
/// gather then stays a loop nest).
std::optional<ScatterForm> scatter_form(const ir::Compute& gather);

}  // namespace tenet::lower
