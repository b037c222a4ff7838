/// \file
/// Bounding the scratch memory of a statement lowered to GEMM calls
/// (lower/gemm.h): the statement runs in chunks along one of its out indices,
/// and its pack buffers (im2col matrices, packed results, a split's columns)
/// hold one chunk at a time.
///
/// A chunk is the statement itself over views: every tensor that the chunked
/// index reads (the result, its init, the factors) is seen from the chunk's
/// first index value on, with the chunk's extent (a fresh size symbol, `len`)
/// in that dimension, and the index runs over [0, len). The contraction plan
/// of that statement, and its lowering, are then those of an ordinary
/// statement; only the buffers' capacity (the largest chunk) differs from
/// their shape.
///
/// The chunked index is an out index, never a summed
/// one, so each output element is summed in the same order as without
/// chunks: the results are those of the whole statement.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/gemm_plan.h"
#include "ir/ir.h"

namespace tenet::lower {

/// A tensor seen through one chunk: `view` is `original` with dimension
/// `dim` of extent `len`; its element i there is the original's start + i.
struct ChunkView {
  ir::ValuePtr view, original;
  int dim = 0;
};

/// One chunk of a statement along out index `index.index`.
struct GemmChunk {
  ir::Dim index;       // the chunked out index, over the whole range [0, extent)
  std::string len;     // the size symbol of the chunk's extent
  ir::Stmt statement;  // the statement over views, `index` in [0, len)
  std::vector<ChunkView> views;
};

/// The chunk of `s` along its out index `index`, or nullopt when some
/// tensor reads that index other than as exactly the index in one dimension
/// (in the same dimension at every read), which a view cannot express.
std::optional<GemmChunk> chunk_statement(const ir::Stmt& s, const std::string& index,
                                         const std::string& len);

/// Whether every matrix of plan `p` stays dense when `index` runs over less
/// than its buffers' capacity: GEMM matrices are rows of columns, so a
/// shortened index must be the outermost of its group (or a loop of GEMMs).
bool keeps_matrices_dense(const ir::GemmPlan& p, const std::string& index);

}  // namespace tenet::lower
