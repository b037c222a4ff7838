/// \file
/// The one matrix-multiply interface generated code calls for contractions
/// that the `contraction` pass lowered (see docs/performance.md):
///
///   tenet::gemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)
///
/// computes C = alpha * op(A) . op(B) + beta * C for row-major matrices, where
/// op(A) is M x K (A stored K x M when trans_a), op(B) is K x N (B stored
/// N x K when trans_b) and C is M x N; a leading dimension is the distance
/// between consecutive rows as stored. Overloads for float and double.
///
/// The backend is chosen when the including file is compiled:
///   TENET_GEMM_DNNL   float32 through oneDNN (what the JIT links where
///                     Debian's libdnnl is installed: twice OpenBLAS's speed on
///                     the machines measured, docs/performance.md): its matmul
///                     primitive, one per shape, with a scratchpad of the
///                     caller's, where <dnnl.h> is installed; else dnnl_sgemm;
///                     float64 through CBLAS when that is defined too, else
///                     the loops (oneDNN has no dgemm);
///   TENET_GEMM_CBLAS  the CBLAS entry points cblas_sgemm / cblas_dgemm, from
///                     OpenBLAS or any other CBLAS (BLIS, the reference BLAS);
///   (neither)         plain loops in this header, so that generated code
///                     still builds and runs correctly without a BLAS.
/// No library header is needed: the entry points are declared here.
///
/// Deterministic at any thread count. Both libraries may split the sum over K
/// among their threads (256 x 256 x 4096 comes out different at 1 and 2
/// threads with either), so every call is single-threaded, on tiles of C's
/// rows and columns and slices of the sum that depend on the shape and the
/// machine alone (gemm_grid, tenet_parallel.h), the tiles shared among
/// OpenMP threads and the slices' partial products added in slice order.
///
/// Expects: M, N, K >= 0; C does not overlap A or B. Guarantees, for every
/// backend: M or N of 0 touches nothing; K of 0 gives beta * C, and beta == 0
/// overwrites C without reading it (C may hold NaN or garbage), as BLAS
/// specifies; leading dimensions of matrices with at most one row are raised
/// to what BLAS requires (any value is meaningful then). Matrices with a
/// dimension or leading dimension beyond INT_MAX (CBLAS takes int) use the
/// loops. The sum over K may run in any order, so results can differ from a
/// sequential sum in the last bits, and differ between backends.
#pragma once
#define TENET_GEMM_H 1  // tenet_emulator.h forwards to tenet::gemm when defined

#include <algorithm>
#include <climits>
#include <cstdint>

#include <type_traits>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "tenet_dnnl.h"  // <dnnl.h> and the primitives' helpers, where installed
#include "tenet_parallel.h"
#ifdef TENET_PROFILE
#include "tenet_profile.h"
#endif
#ifdef TENET_DNNL_PRIMITIVES
#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#elif defined(TENET_GEMM_DNNL)
// oneDNN's row-major sgemm (dnnl.h): 'N' or 'T' for each operand; returns a dnnl_status_t.
extern "C" int dnnl_sgemm(char transa, char transb, int64_t M, int64_t N, int64_t K, float alpha,
                          const float* A, int64_t lda, const float* B, int64_t ldb, float beta,
                          float* C, int64_t ldc);
#endif

#ifdef TENET_GEMM_CBLAS
// The CBLAS ABI (row-major = 101, no transpose = 111, transpose = 112),
// declared here so that generated code needs no BLAS header to compile.
extern "C" {
void cblas_sgemm(int layout, int trans_a, int trans_b, int m, int n, int k, float alpha,
                 const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc);
void cblas_dgemm(int layout, int trans_a, int trans_b, int m, int n, int k, double alpha,
                 const double* a, int lda, const double* b, int ldb, double beta, double* c,
                 int ldc);
}
#endif

namespace tenet {

/// The name of the backend compiled in, for diagnostics and benchmarks.
inline const char* gemm_backend() {
#if defined(TENET_GEMM_DNNL)
  return "dnnl";
#elif defined(TENET_GEMM_CBLAS)
  return "cblas";
#else
  return "loops";
#endif
}

namespace gemm_detail {

/// The reference: C = alpha * op(A) . op(B) + beta * C, one row of C per
/// iteration of the parallel loop (rows are independent, so the result does
/// not depend on the number of threads).
template <typename T>
void gemm_loops(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
#pragma omp parallel for if (m * n * k >= 32768)
  for (int64_t i = 0; i < m; ++i) {
    T* c_row = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) c_row[j] = beta == T(0) ? T(0) : beta * c_row[j];
    for (int64_t p = 0; p < k; ++p) {
      const T a_ip = alpha * (trans_a ? a[p * lda + i] : a[i * lda + p]);
      if (trans_b) {
        for (int64_t j = 0; j < n; ++j) c_row[j] += a_ip * b[j * ldb + p];
      } else {
        const T* b_row = b + p * ldb;
        for (int64_t j = 0; j < n; ++j) c_row[j] += a_ip * b_row[j];
      }
    }
  }
}

/// The leading dimension BLAS requires of a row-major matrix with `cols`
/// columns: at least max(1, cols). A matrix of at most one row never reads
/// its leading dimension, so any value given for it is replaced.
inline int64_t leading_dimension(int64_t given, int64_t rows, int64_t cols) {
  const int64_t required = std::max<int64_t>(1, cols);
  return rows <= 1 ? std::max(given, required) : given;
}

inline bool fits_int(int64_t v) {
  return v <= int64_t(INT_MAX);
}

#ifdef TENET_DNNL_PRIMITIVES
/// oneDNN's matmul primitive for one shape (brgemm kernels on AVX-512 and
/// AVX2), created on first use and kept, with the scratchpad the caller
/// provides: dnnl_sgemm allocates and frees its packing buffers on every
/// call, whose pages fault in again (1504 faults in 26 calls of 784 x 1024 x
/// 256, none with the primitive; the same time to 5%: docs/performance.md).
struct Matmul {
  bool ok = false;
  dnnl_primitive_t primitive = nullptr;
  dnnl_memory_desc_t a{}, b{}, c{}, scratchpad{};
  size_t scratchpad_bytes = 0;
};

inline void make_matmul(Matmul& k, bool ta, bool tb, int64_t m, int64_t n, int64_t depth,
                        float alpha, int64_t lda, int64_t ldb, float beta, int64_t ldc) {
  const dnnl_dims_t a_dims = {m, depth}, b_dims = {depth, n}, c_dims = {m, n};
  const dnnl_dims_t a_strides = {ta ? 1 : lda, ta ? lda : 1},
                    b_strides = {tb ? 1 : ldb, tb ? ldb : 1}, c_strides = {ldc, 1};
  dnnl_matmul_desc_t desc{};
  if (dnnl_memory_desc_init_by_strides(&k.a, 2, a_dims, dnnl_f32, a_strides) != dnnl_success ||
      dnnl_memory_desc_init_by_strides(&k.b, 2, b_dims, dnnl_f32, b_strides) != dnnl_success ||
      dnnl_memory_desc_init_by_strides(&k.c, 2, c_dims, dnnl_f32, c_strides) != dnnl_success ||
      dnnl_matmul_desc_init(&desc, &k.a, &k.b, nullptr, &k.c) != dnnl_success)
    return;
  dnnl_primitive_attr_t attr = nullptr;
  if (dnnl_primitive_attr_create(&attr) != dnnl_success) return;
  const std::unique_ptr<dnnl_primitive_attr, decltype(&dnnl_primitive_attr_destroy)> owned(
      attr, &dnnl_primitive_attr_destroy);
  if (dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) != dnnl_success)
    return;
  // alpha scales the product; beta * C is a sum post-op (none for beta 0,
  // so that C is never read: it may hold NaN).
  if (alpha != 1.0f && dnnl_primitive_attr_set_output_scales(attr, 1, 0, &alpha) != dnnl_success)
    return;
  if (beta != 0.0f) {
    dnnl_post_ops_t ops = nullptr;
    if (dnnl_post_ops_create(&ops) != dnnl_success) return;
    const std::unique_ptr<dnnl_post_ops, decltype(&dnnl_post_ops_destroy)> owned_ops(
        ops, &dnnl_post_ops_destroy);
    if (dnnl_post_ops_append_sum(ops, beta) != dnnl_success ||
        dnnl_primitive_attr_set_post_ops(attr, ops) != dnnl_success)
      return;
  }
  dnnl_primitive_desc_t pd = nullptr;
  if (dnnl_primitive_desc_create(&pd, &desc, attr, dnnl_detail::engine(), nullptr) != dnnl_success)
    return;
  if (const dnnl_memory_desc_t* scratchpad =
          dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0)) {
    k.scratchpad = *scratchpad;
    k.scratchpad_bytes = dnnl_memory_desc_get_size(scratchpad);
  }
  k.ok = dnnl_primitive_create(&k.primitive, pd) == dnnl_success;
  dnnl_primitive_desc_destroy(pd);
}

/// The primitive for this shape, created (for the calling thread's thread
/// count, 1 under one_thread_gemm) on first use and kept.
inline const Matmul& matmul(bool ta, bool tb, int64_t m, int64_t n, int64_t depth, float alpha,
                            int64_t lda, int64_t ldb, float beta, int64_t ldc) {
  static std::mutex mutex;
  static auto* kernels = new std::map<std::array<int64_t, 10>, std::unique_ptr<Matmul>>();
  uint32_t alpha_bits, beta_bits;
  std::memcpy(&alpha_bits, &alpha, sizeof alpha_bits);
  std::memcpy(&beta_bits, &beta, sizeof beta_bits);
  // A fixed-size key: looking a primitive up allocates nothing.
  const std::array<int64_t, 10> key = {int64_t(ta), int64_t(tb), m,   n,          depth,
                                       lda,         ldb,         ldc, alpha_bits, beta_bits};
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<Matmul>& k = (*kernels)[key];
  if (!k) {
    k = std::make_unique<Matmul>();
    make_matmul(*k, ta, tb, m, n, depth, alpha, lda, ldb, beta, ldc);
  }
  return *k;
}

/// Per thread and primitive: memory objects pointed at each call's data, and
/// the scratchpad.
struct MatmulMemories {
  dnnl_memory_t a = nullptr, b = nullptr, c = nullptr, scratchpad = nullptr;
  dnnl_detail::Buffer scratchpad_buffer;
};

/// `rows` rows of `cols` floats from `from` (leading dimension `from_ld`) to
/// `to` (leading dimension `to_ld`).
inline void copy_rows(float* to, int64_t to_ld, const float* from, int64_t from_ld, int64_t rows,
                      int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(to + r * to_ld, from + r * from_ld, size_t(cols) * sizeof(float));
}

/// C = alpha * op(A) . op(B) + beta * C through the primitive; false when
/// oneDNN refused the shape or the call (before C is written).
///
/// oneDNN's brgemm matmul takes dense matrices only; for a block of rows of
/// a transposed A, or of columns of C, it falls back to its GEMM-based
/// matmul, which allocates its buffers on every call (the MLP's training
/// step: 35 to 70 new pages per step). Such operands are copied into dense
/// buffers of the thread's own (C: out after, and in before where beta is
/// not 0); the copies are O(1 / k) of the work, and exact.
inline bool dnnl_matmul(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                        const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                        float* c, int64_t ldc) {
  // The dense leading dimensions: what the primitive is made for.
  const int64_t a_ld = ta ? m : k, b_ld = tb ? k : n;
  const Matmul& p = matmul(ta, tb, m, n, k, alpha, a_ld, b_ld, beta, n);
  if (!p.ok) return false;
  thread_local dnnl_detail::Buffer a_dense, b_dense, c_dense;
  auto dense = [](dnnl_detail::Buffer& buffer, int64_t rows, int64_t cols) {
    return static_cast<float*>(buffer.get(size_t(rows * cols) * sizeof(float)));
  };
  if (lda != a_ld) {
    float* to = dense(a_dense, ta ? k : m, a_ld);
    if (!to) return false;
    copy_rows(to, a_ld, a, lda, ta ? k : m, a_ld);
    a = to;
  }
  if (ldb != b_ld) {
    float* to = dense(b_dense, tb ? n : k, b_ld);
    if (!to) return false;
    copy_rows(to, b_ld, b, ldb, tb ? n : k, b_ld);
    b = to;
  }
  float* result = c;
  if (ldc != n) {
    result = dense(c_dense, m, n);
    if (!result) return false;
    if (beta != 0.0f) copy_rows(result, n, c, ldc, m, n);
  }
  thread_local std::map<const Matmul*, MatmulMemories> by_primitive;
  MatmulMemories& mem = by_primitive[&p];
  using dnnl_detail::bind;
  if (!bind(mem.a, p.a, a) || !bind(mem.b, p.b, b) || !bind(mem.c, p.c, result) ||
      !dnnl_detail::execute(
          p.primitive,
          {dnnl_exec_arg_t{DNNL_ARG_SRC, mem.a}, dnnl_exec_arg_t{DNNL_ARG_WEIGHTS, mem.b},
           dnnl_exec_arg_t{DNNL_ARG_DST, mem.c}},
          p.scratchpad, p.scratchpad_bytes, mem.scratchpad, mem.scratchpad_buffer))
    return false;
  if (result != c) copy_rows(c, ldc, result, n, m, n);
  return true;
}
#endif

/// The library's call, false when none is compiled in for the type: float32
/// through oneDNN where TENET_GEMM_DNNL is defined, else CBLAS; float64 through
/// CBLAS. A oneDNN status other than success (it checks its arguments before
/// writing anything) is also false.
inline bool library_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                         const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                         float* c, int64_t ldc) {
#if defined(TENET_DNNL_PRIMITIVES)
  return dnnl_matmul(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) ||
         dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) ==
             0;
#elif defined(TENET_GEMM_DNNL)
  return dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) ==
         0;
#elif defined(TENET_GEMM_CBLAS)
  cblas_sgemm(101, ta ? 112 : 111, tb ? 112 : 111, int(m), int(n), int(k), alpha, a, int(lda), b,
              int(ldb), beta, c, int(ldc));
  return true;
#else
  (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)b;
  (void)ldb, (void)beta, (void)c, (void)ldc;
  return false;
#endif
}

inline bool library_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                         const double* a, int64_t lda, const double* b, int64_t ldb, double beta,
                         double* c, int64_t ldc) {
#ifdef TENET_GEMM_CBLAS
  cblas_dgemm(101, ta ? 112 : 111, tb ? 112 : 111, int(m), int(n), int(k), alpha, a, int(lda), b,
              int(ldb), beta, c, int(ldc));
  return true;
#else
  (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)b;
  (void)ldb, (void)beta, (void)c, (void)ldc;
  return false;
#endif
}

/// Whether a library is compiled in for T.
template <typename T>
constexpr bool has_library() {
#if defined(TENET_GEMM_CBLAS)
  return true;
#elif defined(TENET_GEMM_DNNL)
  return std::is_same_v<T, float>;
#else
  return false;
#endif
}

/// One library call on one thread: with OpenMP's thread count 1 for the
/// calling task, neither oneDNN nor OpenBLAS starts threads or splits the sum
/// over K. Should the library refuse, the loops compute the same block.
template <typename T>
void one_thread_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                     int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
#ifdef _OPENMP
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
#endif
  const bool done = library_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
  if (!done) gemm_loops(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/// How a GEMM is cut into tiles: `rows` blocks of C's rows times `cols`
/// blocks of its columns times `slices` of the sum over K. Each tile is one
/// single-threaded library call; a slice after the first computes its partial
/// product into a buffer, and the partial products are added onto the first
/// slice's in slice order. The grid depends on the shape alone, never on the
/// thread count, so every element of C is computed by the same calls in the
/// same order at any thread count (docs/performance.md, "The parallel
/// decomposition").
struct GemmGrid {
  int64_t rows = 1, cols = 1, slices = 1;
  int64_t tiles() const { return rows * cols * slices; }
};

/// The grid's limits: at most parallel_pieces() tiles (tenet_parallel.h), each
/// at least least_tile_flops, 64 rows, 64 columns and 256 terms of the sum;
/// partial products of at most 64 MiB.
///
/// A call costs a few microseconds to start: on one thread 4 MFLOP tiles
/// took 10-20% longer in all than 16 MFLOP ones. So a machine that gets 8
/// pieces (up to 4 cores) keeps tiles of 16 MFLOP; with more cores, smaller
/// tiles keep more of them busy than the overhead costs (the MNIST CNN's
/// 151 MFLOP first dense layer in 8 tiles left half of 16 threads idle):
/// 8 MFLOP for 16 pieces, 4 MFLOP for 32 and more (least_piece_flops).
inline int64_t least_tile_flops(int64_t pieces) {
  return least_piece_flops(int64_t(1) << 24, pieces);
}
constexpr int64_t kLeastTileRows = 64, kLeastTileCols = 64, kLeastTileDepth = 256;
constexpr int64_t kMostPartialBytes = int64_t(64) << 20;

/// What a grid costs beyond the multiply-adds, in elements moved: a model
/// fitted to single-threaded oneDNN on 15 GEMM shapes of CapsNet, the MNIST
/// CNN, ResNet and a transformer, each cut every way the limits allow into 2
/// to 64 tiles (docs/performance.md, "The parallel decomposition": among the
/// grids of one size it picks one 2% slower than the fastest on average, 11%
/// at worst). Every tile packs its A panel (A is packed `cols` times) and
/// its B panel (`rows` times); a tile whose operand is not one dense block of
/// the caller's matrix copies it first (oneDNN's fast kernels take dense
/// matrices only: 3 more moves per element); a block of C's columns is copied
/// out (2); partial products are written and read again (4); each costs 1.5
/// times as much once its block outgrows a 1 MiB cache.
inline double grid_cost(const GemmGrid& g, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                        size_t element_bytes) {
  const double tm = double(m) / g.rows, tn = double(n) / g.cols, tk = double(k) / g.slices;
  const auto cached = [element_bytes](double elements) {
    return elements * double(element_bytes) <= double(1 << 20) ? 1.0 : 1.5;
  };
  const double a_moves = double(g.cols) * double(m) * double(k) * cached(tm * tk);
  const double b_moves = double(g.rows) * double(k) * double(n) * cached(tk * tn);
  const bool a_copied = ta ? g.rows > 1 : g.slices > 1;  // a block of A's stored columns
  const bool b_copied = tb ? g.slices > 1 : g.cols > 1;  // a block of B's stored columns
  const double c_elements = double(m) * double(n);
  return a_moves * (a_copied ? 4 : 1) + b_moves * (b_copied ? 4 : 1) +
         (g.cols > 1 ? 2.0 * double(g.slices) * c_elements * cached(tm * tn) : 0.0) +
         4.0 * double(g.slices - 1) * c_elements * cached(c_elements);
}

/// The grid of a GEMM, from its shape and the machine alone: the most tiles
/// (a power of two, so that 2, 4, ... threads share them evenly; at most
/// `pieces`, a power of two) that the limits allow, cut the cheapest way by
/// grid_cost.
inline GemmGrid gemm_grid(bool ta, bool tb, int64_t m, int64_t n, int64_t k, size_t element_bytes,
                          int64_t pieces = parallel_pieces()) {
  const int64_t flops = 2 * m * n * k;
  int64_t most = 1;
  while (most * 2 <= pieces && flops / (most * 2) >= least_tile_flops(pieces)) most *= 2;
  for (int64_t tiles = most; tiles > 1; tiles /= 2) {
    GemmGrid best;
    double best_cost = -1;
    for (int64_t rows = 1; rows <= tiles; rows *= 2)
      for (int64_t cols = 1; rows * cols <= tiles; cols *= 2) {
        const GemmGrid g{rows, cols, tiles / (rows * cols)};
        if ((g.rows > 1 && m / g.rows < kLeastTileRows) ||
            (g.cols > 1 && n / g.cols < kLeastTileCols) ||
            (g.slices > 1 && k / g.slices < kLeastTileDepth) ||
            (g.slices - 1) * m * n * int64_t(element_bytes) > kMostPartialBytes)
          continue;
        const double cost = grid_cost(g, ta, tb, m, n, k, element_bytes);
        if (best_cost < 0 || cost < best_cost) {
          best = g;
          best_cost = cost;
        }
      }
    if (best_cost >= 0) return best;
  }
  return GemmGrid{};
}

/// The part [first, first + count) of `extent` that block `block` of
/// `blocks` takes (the first extent % blocks blocks one longer).
inline void block_range(int64_t extent, int64_t block, int64_t blocks, int64_t& first,
                        int64_t& count) {
  first = extent * block / blocks;
  count = extent * (block + 1) / blocks - first;
}

/// The partial products of the calling thread's GEMMs (slices after the
/// first), kept and grown: no allocation once the largest has been seen.
template <typename T>
T* partial_products(size_t elements) {
  thread_local std::vector<T> buffer;
  if (buffer.size() < elements) buffer.resize(elements);
  return buffer.data();
}

/// The library's GEMM over the tiles of gemm_grid, each one single-threaded
/// call, the tiles in parallel when not already inside a parallel region (a
/// region that is inactive counts: whether one encloses the call does not
/// depend on the thread count). Tiles are handed out dynamically: which
/// thread computes a tile changes nothing in its bits, and a thread that the
/// machine's load delays does not hold the others up.
template <typename T>
void blocked_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                  int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
#ifdef _OPENMP
  const bool nested = omp_get_level() > 0;
#else
  const bool nested = true;
#endif
  const GemmGrid g = nested ? GemmGrid{} : gemm_grid(ta, tb, m, n, k, sizeof(T));
  // Slice s > 0 of tile (r, c) writes rows [first_row, ...) of partial s - 1,
  // an m x n matrix.
  T* partials = g.slices > 1 ? partial_products<T>(size_t((g.slices - 1) * m * n)) : nullptr;
#ifdef TENET_PROFILE
  if (!nested) profile::note_pieces(g.tiles(), true);  // not one per thread
#endif
#pragma omp parallel for schedule(dynamic, 1) if (g.tiles() > 1)
  for (int64_t tile = 0; tile < g.tiles(); ++tile) {
    int64_t r0, rn, c0, cn, k0, kn;
    block_range(m, tile % g.rows, g.rows, r0, rn);
    block_range(n, tile / g.rows % g.cols, g.cols, c0, cn);
    const int64_t slice = tile / (g.rows * g.cols);
    block_range(k, slice, g.slices, k0, kn);
    const T* a_tile = ta ? a + k0 * lda + r0 : a + r0 * lda + k0;
    const T* b_tile = tb ? b + c0 * ldb + k0 : b + k0 * ldb + c0;
    if (slice == 0)
      one_thread_gemm(ta, tb, rn, cn, kn, alpha, a_tile, lda, b_tile, ldb, beta, c + r0 * ldc + c0,
                      ldc);
    else
      one_thread_gemm(ta, tb, rn, cn, kn, alpha, a_tile, lda, b_tile, ldb, T(0),
                      partials + (slice - 1) * m * n + r0 * n + c0, n);
  }
  // Then C += partial 1 + partial 2 + ..., in that order for every element.
  if (g.slices == 1) return;
#pragma omp parallel for schedule(static) if (m * n * (g.slices - 1) >= 32768)
  for (int64_t i = 0; i < m; ++i)
    for (int64_t s = 1; s < g.slices; ++s) {
      const T* from = partials + (s - 1) * m * n + i * n;
      T* to = c + i * ldc;
      for (int64_t j = 0; j < n; ++j) to[j] += from[j];
    }
}

/// Both overloads: degenerate shapes, leading dimensions, then the backend.
template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {  // beta * C; beta == 0 never reads C
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
    return;
  }
  lda = trans_a ? leading_dimension(lda, k, m) : leading_dimension(lda, m, k);
  ldb = trans_b ? leading_dimension(ldb, n, k) : leading_dimension(ldb, k, n);
  ldc = leading_dimension(ldc, m, n);
  const bool fits =
      fits_int(m) && fits_int(n) && fits_int(k) && fits_int(lda) && fits_int(ldb) && fits_int(ldc);
  if (fits && has_library<T>())
    blocked_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    gemm_loops(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace gemm_detail

/// C = alpha * op(A) . op(B) + beta * C in float32 (see the file comment).
inline void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                 const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                 int64_t ldc) {
  gemm_detail::gemm<float>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/// The float64 version.
inline void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                 const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
                 int64_t ldc) {
  gemm_detail::gemm<double>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace tenet
