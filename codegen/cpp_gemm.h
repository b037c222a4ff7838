/// \file
/// How the C++ backend computes a statement that the `contraction` pass
/// lowered (passes/contraction.h): the plan, the pack buffers, and the
/// ordinary statements that fill and empty them.
///
/// Internal to codegen/. Packing is not a special case of the emitter: it is
/// a plain assignment statement (`x_packed(b, c, ky, kz, y, z) = x(b, c, y +
/// ky, z + kz)`, guarded reads included) that the loop-nest emitter writes like
/// any other, so it is readable, commented and OpenMP-parallel; the GEMM call
/// between the packs is one new kind of code, the gather of a split statement
/// (col2im) as a scatter of contiguous windows (gemm_col2im.cpp) the other.
/// When the buffers would exceed CppOptions::pack_budget_bytes, the statement
/// runs in chunks along one of its out indices (gemm_chunks.h), and all of
/// the above is planned for one chunk; packs that read nothing of the chunk
/// run once, before the first.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen/c_text.h"
#include "codegen/gemm_chunks.h"
#include "ir/gemm_plan.h"
#include "ir/ir.h"

namespace tenet::codegen::detail {

/// A loop of GEMMs runs them one per thread (the library single-threaded
/// inside the parallel region) when each does fewer multiply-adds than this;
/// larger ones run one after another, each threaded by the library.
constexpr int64_t kThreadedGemmWork = int64_t(1) << 22;

struct GemmLowering {
  /// The statement planned: the lowered statement, or one chunk of it.
  const ir::Stmt* statement = nullptr;
  ir::GemmPlan plan;
  /// Dense buffers (workspace temporaries), null when the matrix is used in
  /// place: A as [loops it reads][m][k], B as [loops it reads][k][n], C as
  /// [loops][m][n].
  ir::ValuePtr a_buffer, b_buffer, c_buffer;
  std::vector<ir::Dim> a_loops, b_loops;  // the loop indices each buffer has
  /// Every buffer above that exists, and the split's columns: the workspace
  /// temporaries, in the order they are planned.
  std::vector<ir::ValuePtr> buffers;
  /// Statements run before the GEMM calls: the packs, and (C in place with an
  /// init) the copy of the init into the result, after which the GEMM adds.
  std::vector<ir::Stmt> before;
  /// In chunks: the packs of matrices that no chunk changes (they read no
  /// view), moved out of `before` to run once, before the first chunk.
  std::vector<ir::Stmt> before_chunks;
  /// C packed: result(out) = [init(out) +] c_buffer(loops, m, n); for a
  /// split statement, then the gather of the result from the columns.
  std::vector<ir::Stmt> after;

  /// Set when the statement runs in chunks: `statement` is the chunk's, and
  /// the buffers' shapes have the chunk's extent `chunk->len` where their
  /// capacity has the largest chunk's, `capacity` (a C++ size local); the
  /// loop over chunks steps `start` (a C++ name) through the index.
  std::shared_ptr<const GemmChunk> chunk;
  std::string chunk_start, chunk_capacity;
  /// M * N * K of the whole statement, as C++ (a per-call decision tests it).
  std::string work;

  /// The statement the GEMM computes: the split's product, or the statement.
  const ir::Compute& product() const {
    return plan.split ? plan.split->product : statement->compute;
  }
};

/// The buffers and statements for a lowered statement `s` of plan `plan`.
/// Buffer values are fresh (they belong to no function); `s` must outlive the
/// result (the plan points into its body).
GemmLowering lower_gemm(const ir::Stmt& s, ir::GemmPlan plan);

/// The buffers whose shapes hold `len` (a chunk's extent), and the bytes
/// they take per unit of it: the sum of their element counts with len = 1,
/// times the element size.
ir::SizeExpr bytes_per_chunk_unit(const GemmLowering& g, const std::string& len);

/// The product of the extents of `dims` as C++, constants folded ("C * 81").
std::string product_text(const std::vector<ir::Dim>& dims, const NameMap& size_names);

}  // namespace tenet::codegen::detail
