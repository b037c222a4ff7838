/// \file
/// How a contraction statement is computed by the GEMM library: the typed
/// plan the `contraction` pass (passes/contraction.h) attaches to a statement
/// (Annotations::gemm) and every backend's lowering follows as it stands.
///
/// A statement `C(out) +=! A(...) * B(...)` (or += onto an init) becomes one
/// GEMM per value of the `loops` indices: C[m | n] = A[m | k] * B[k | n],
/// where each group of indices is flattened into one matrix dimension in the
/// order listed. Each matrix is used in place (possibly transposed) or packed
/// into a dense buffer; see passes/contraction.h for how the plan is chosen.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tenet::ir {

/// How the GEMM reaches one matrix: A (M x K), B (K x N) or C (M x N).
struct GemmMatrix {
  /// A, B: the factor of the product's body `x * y` read (0: x, 1: y); C: -1.
  int factor = -1;
  bool packed = false;  // copied into (or out of) a dense buffer
  /// In place only: stored with the rows innermost (op(X) = X^T for BLAS).
  bool transposed = false;
  /// In place only: the tensor dimension whose stride is the leading
  /// dimension, or -1 when the matrix has at most one row (as stored).
  int ld_dim = -1;
};

/// A statement computed in two steps (the input gradient of a strided
/// convolution, see passes/contraction_split.h): `product`, a contraction
/// into a fresh tensor of columns (the one the plan's GEMM computes), then
/// `gather`, the statement's own result (and init) as a guarded sum over
/// those columns.
struct SplitGather {
  Compute product;
  Compute gather;
};

struct GemmPlan {
  std::vector<Dim> loops;  // one GEMM per value of these out indices
  std::vector<Dim> m, n, k;
  GemmMatrix a, b, c;
  SizeExpr work;  // M * N * K of one GEMM
  /// Set when the GEMM computes split->product (the plan's reads and C
  /// belong to it), followed by split->gather.
  std::shared_ptr<const SplitGather> split;
  /// 0: always a GEMM. Otherwise the sizes decide per call: a GEMM when
  /// `work` is at least this, the statement's own loops when less.
  int64_t per_call_min_work = 0;

  /// The statement the GEMM computes: split->product, or `statement` itself.
  const Compute& product(const Compute& statement) const {
    return split ? split->product : statement;
  }
};

/// The read of matrix `m` (A or B) in `product`'s body (GemmPlan::product).
const ExprNode& gemm_read(const Compute& product, const GemmMatrix& m);

/// The leading dimension of an in-place matrix whose tensor is read at
/// `indices` with `rows` and `cols` (plain indices, one dimension each): the
/// dimension of the last row (the last column when transposed), or -1 when
/// there is no row.
int gemm_leading_dim(const std::vector<Affine>& indices, const std::vector<Dim>& rows,
                     const std::vector<Dim>& cols, bool transposed);

/// The plan as one line, for comments and the generated code:
///   "for b: acc[o | y, z] = w[o | c, ky, kz] * pack(x)[c, ky, kz | y, z]"
/// (rows | columns of each matrix; pack(x) is a packed copy, x^T a transposed
/// view), preceded for a split by the gather: "dx(b, c, h, w) = sum over i, j
/// of dx_cols?(...); ...".
std::string describe(const GemmPlan& plan, const Compute& statement);

}  // namespace tenet::ir
