/// \file
/// How the C++ backend computes a statement that the `contraction` pass
/// lowered (passes/contraction.h): the plan, the pack buffers, and the
/// ordinary statements that fill and empty them.
///
/// Internal to codegen/. Packing is not a special case of the emitter: it is
/// a plain assignment statement (`x_packed(b, c, ky, kz, y, z) = x(b, c, y +
/// ky, z + kz)`, guarded reads included) that the loop-nest emitter writes like
/// any other, so it is readable, commented and OpenMP-parallel; the GEMM call
/// between the packs is the only new kind of code.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/ir.h"
#include "passes/contraction.h"

namespace tenet::codegen::detail {

/// A loop of GEMMs runs them one per thread (the library single-threaded
/// inside the parallel region) when each does fewer multiply-adds than this;
/// larger ones run one after another, each threaded by the library.
constexpr int64_t kThreadedGemmWork = int64_t(1) << 22;

struct GemmLowering {
  passes::ContractionPlan plan;
  /// Dense buffers (workspace temporaries), null when the matrix is used in
  /// place: A as [loops it reads][m][k], B as [loops it reads][k][n], C as
  /// [loops][m][n].
  ir::ValuePtr a_buffer, b_buffer, c_buffer;
  std::vector<ir::Dim> a_loops, b_loops;  // the loop indices each buffer has
  /// Every buffer above that exists, and the split's columns: the workspace
  /// temporaries, in carving order.
  std::vector<ir::ValuePtr> buffers;
  /// Statements run before the GEMM calls: the packs, and (C in place with an
  /// init) the copy of the init into the result, after which the GEMM adds.
  std::vector<ir::Stmt> before;
  /// C packed: result(out) = [init(out) +] c_buffer(loops, m, n); for a
  /// split statement, then the gather of the result from the columns.
  std::vector<ir::Stmt> after;

  /// The statement the GEMM computes: the split's product, or the statement.
  const ir::Compute& product(const ir::Stmt& s) const {
    return plan.split ? plan.split->product : s.compute;
  }
};

/// The buffers and statements for a lowered statement `s` of plan `plan`.
/// Buffer values are fresh (they belong to no function); `s` must outlive the
/// result (the plan points into its body).
GemmLowering lower_gemm(const ir::Stmt& s, passes::ContractionPlan plan);

}  // namespace tenet::codegen::detail
