/// \file
/// `lower_gemms`: how each statement with a GEMM plan (ir/gemm_plan.h) is
/// computed, as IR every backend can print: the pack buffers and the plain
/// statements that fill and empty them around the GEMM calls, in chunks when
/// the buffers would exceed a budget (gemm_chunks.h).
///
/// Packing is not a special case for a backend: it is a plain assignment
/// statement (`x_packed(b, c, ky, kz, y, z) = x(b, c, y + ky, z + kz)`,
/// guarded reads included) that the backend writes like any other; the GEMM
/// calls between the packs are one new kind of code, the gather of a split
/// statement (col2im) the other. When the buffers would exceed the budget, the
/// statement runs in chunks along one of its out indices, and all of the above
/// is planned for one chunk; packs that read nothing of the chunk run once,
/// before the first.
///
/// Expects: a verified function after the pass pipeline (plans from
/// `contraction`). Guarantees: the function is unchanged; the lowering refers
/// to its statements, which must outlive it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/gemm_plan.h"
#include "ir/ir.h"
#include "lower/col2im.h"
#include "lower/gemm_chunks.h"

namespace tenet::lower {

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
  /// A split statement's gather (the last of `after`) as a scatter of
  /// windows, when it has that form (col2im.h).
  std::optional<ScatterForm> scatter;

  /// Set when the statement runs in chunks: `statement` is the chunk's, and
  /// the buffers' shapes have the chunk's extent `chunk->len` (a size
  /// symbol) where their capacity, the largest chunk's, is the size symbol
  /// `capacity`: at most the budget's worth of the chunked index
  /// (bytes_per_chunk_unit), decided when the sizes are known.
  std::shared_ptr<const GemmChunk> chunk;
  std::string capacity;

  /// The statement the GEMM computes: the split's product, or the statement.
  const ir::Compute& product() const {
    return plan.split ? plan.split->product : statement->compute;
  }
  /// The buffers' shapes with the chunk's extent at its capacity.
  std::vector<ir::SizeExpr> capacity_shape(const ir::Value& buffer) const;
};

/// The buffers and statements for a lowered statement `s` of plan `plan`.
/// Buffer values are fresh (they belong to no function); `s` must outlive the
/// result (the plan points into its body).
GemmLowering lower_gemm(const ir::Stmt& s, ir::GemmPlan plan);

/// The buffers whose shapes hold `len` (a chunk's extent), and the bytes
/// they take per unit of it: the sum of their element counts with len = 1,
/// times the element size.
ir::SizeExpr bytes_per_chunk_unit(const GemmLowering& g, const std::string& len);

/// A loop of GEMMs runs them one per thread (the library single-threaded
/// inside the parallel region) when each does fewer multiply-adds than this
/// times the loop's iterations: when the library would cut one GEMM into
/// fewer than twice as many tiles as the loop has iterations (a tile is at
/// least 2^23 multiply-adds, runtime/tenet_gemm.h). Larger ones run one
/// after another, each cut into tiles the threads share (the loop tree's
/// GEMM calls, loops.h). CapsNet's first convolution, a GEMM of 8.3 million
/// multiply-adds per image, ran one image after another, each on one tile,
/// when the bound was 2^22 regardless of the images: 7.4 ms at any thread
/// count.
constexpr int64_t kThreadedGemmWork = int64_t(1) << 24;

struct LoweredFunction;  // lowered_function.h

/// The lowering of every live statement of `lowered.function` with a GEMM
/// plan (lowered.gemms), in chunks where its buffers could exceed
/// `pack_budget_bytes` (0: never in chunks). Run after find_liveness.
void lower_gemms(LoweredFunction& lowered, int64_t pack_budget_bytes);

}  // namespace tenet::lower
