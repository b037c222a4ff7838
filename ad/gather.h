/// \file
/// Turning the adjoint of one affine read into a gather (internal to ad/).
///
/// A statement over a domain D reads R(a(x)); the read's contribution to R's
/// adjoint is  dR(y) += sum over {x in D : a(x) = y} of g(x).  The IR has no
/// scatter: a Compute writes every element of its own domain exactly once. So
/// the contribution is always written as a Compute over R's domain whose
/// reduce indices enumerate, for each y, the x with a(x) = y:
///
///   - for each read dimension m in order, a "pivot" index with coefficient
///     +1 or -1 is solved from y_m = a_m(x) (an affine expression in y and
///     the remaining indices); the other indices of D stay free and become the
///     reduce indices, over their original ranges;
///   - each solved pivot must lie in its original range: a range guard, written
///     as a guarded read (`dy?(b, o, h - ki, w - kj)`) where a read of that
///     factor already implies it, otherwise as select(lo <= p && p < hi, g, 0);
///   - a dimension with no unit-coefficient index left (x(2*i), the second i of
///     x(i, i), a constant x(0, j)) becomes an equality mask select(y_m == a_m, ..)
///     over the free indices: correct and race-free, but it costs the masked
///     range (documented in ad/README.md; convolution and pooling never need it).
///
/// Pivot choice, among the unit-coefficient indices of a dimension: an index
/// that no later dimension mentions, then one with a symbolic extent, then the
/// larger constant extent, then the earlier in the domain. It keeps the free
/// (reduce) ranges small: for x(i + ki) it solves the output position i and
/// sums over the kernel tap ki; for x(2*i + ki) only ki has coefficient 1, so
/// it sums over i with the guard 0 <= h - 2*i < K.
///
/// Every element of R's adjoint is owned by one iteration of the out domain
/// and its contributions are summed in the fixed order of the reduce indices:
/// the result is deterministic for any parallelisation over the out indices.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tenet::ad {

struct Gather {
  std::vector<ir::Dim> out;     // R's domain, one per dimension of R
  std::vector<ir::Dim> reduce;  // the contributions to one element of R
  ir::Expr body;                // the contribution for one (out, reduce) point
  /// "adjoint" (one contribution per element, no guard), "gather" (a sum
  /// and/or range guards) or "masked gather" (an equality mask was needed).
  std::string kind;
};

/// `domain` is the statement's out and reduce dims; `read` the read of R;
/// `contribution` the adjoint of that read over `domain`. `taken_names` are
/// names the new index names must avoid (tensor names, for readability).
Gather invert_read(const std::vector<ir::Dim>& domain, const ir::Expr& read,
                   const ir::Expr& contribution, const std::set<std::string>& taken_names);

}  // namespace tenet::ad
