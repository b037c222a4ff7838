/// \file
/// Part of the `contraction` pass (contraction.h): the split of a strided
/// gather into a GEMM and a col2im-like sum.
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
#pragma once

#include <optional>

#include "passes/contraction.h"

namespace tenet::passes::detail {

/// The two statements for `c`, or nullopt when `c` has no guarded factor
/// with such a dimension (a dimension whose index mixes out and reduce
/// indices, a reduce index with a coefficient of magnitude 2 or more), or the
/// split does not apply (see contraction_split.cpp).
std::optional<SplitGather> split_strided_gather(const ir::Compute& c);

}  // namespace tenet::passes::detail
