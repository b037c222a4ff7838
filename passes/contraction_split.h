/// \file
/// Part of the `contraction` pass (contraction.h): the split of a
/// convolution's input gradient (a gather) into a GEMM and a col2im-like sum.
///
/// The input gradient of a strided convolution reads the weights through a
/// guard at `h - 2*i`: an out index (h) and a reduce index of stride 2 (i) in
/// one dimension. As one GEMM, that read would be packed as a (i, ...) x
/// (h, ...) matrix that is mostly zeros and many times the size of the
/// weights. Instead, with kappa standing for the whole index h - 2*i,
///
///     cols(b, i, j, c, kappa, lambda) +=! dy(b, o, i, j) * w(o, c, kappa, lambda)
///     dx(b, c, h, w) +=! cols?(b, i, j, c, h - 2*i, w - 2*j)      (sum over i, j)
///
/// the first is a dense GEMM doing only the useful multiply-adds, the second
/// a guarded gather (col2im). Same sum in real arithmetic, reassociated.
///
/// An unstrided convolution's input gradient, `dx(b, c, h, w) +=! dy?(b, o,
/// h - kh, w - kw) * w(o, c, kh, kw)`, is a GEMM as it stands, but its
/// packed factor has a row per (b, h, w) and a column per (o, kh, kw), the
/// zeros around dy included (for the MNIST CNN's second convolution, 2.35
/// times the columns' size, rebuilt and re-packed by the library every step).
/// It is split the same way when the columns are provably no larger than that
/// packed factor (equal extents cancel; what remains must be constant), and
/// the split does no more multiply-adds or, counting each packed element as
/// 16 of them, costs less: over 2x2 images (ResNet-18's last stage at 64x64)
/// the packed factor is the weight spread over a matrix as large as itself,
/// for a GEMM of a few rows (packing_outweighs in contraction_split.cpp).
#pragma once

#include <optional>

#include "passes/contraction.h"

namespace tenet::passes::detail {

/// The two statements for `c`, or nullopt when `c` has no guarded factor
/// with such a dimension (a dimension whose index mixes out and reduce
/// indices: with a reduce index of coefficient magnitude 2 or more, or any
/// when the columns are no larger than the packed factor), or the split does
/// not apply (see contraction_split.cpp).
std::optional<ir::SplitGather> split_gather(const ir::Compute& c);

}  // namespace tenet::passes::detail
