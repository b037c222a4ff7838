/// \file
/// The convolution interface generated code calls for the statements the
/// `contraction` pass gave a convolution plan (ir/conv_plan.h):
///
///   tenet::conv2d_forward(problem, x, x_strides, w, w_strides, y, y_strides)
///   tenet::conv2d_backward_data(problem, dy, dy_strides, w, w_strides, dx, dx_strides)
///   tenet::conv2d_backward_weights(problem, x, x_strides, dy, dy_strides, dw, dw_strides)
///
/// over float32 NCHW images (x, y and their gradients) and OIHW filters, with
/// strides in elements, zero padding (pad_top and pad_left given, the bottom
/// and right following from the sizes), no dilation, and channel groups
/// (Conv2dProblem::groups; G = in_channels for a depthwise convolution):
///   y(n, o, p, q) = sum over c, i, j of x(n, g*C/G + c, S*p + i - P, S*q + j - P) * w(o, c, i, j)
/// where g = o / (O/G) and c runs over C/G.
/// Each call overwrites its result.
///
/// The backend is chosen when the including file is compiled:
///   TENET_GEMM_DNNL (with <dnnl.h>)  oneDNN's direct convolution (what PyTorch
///                   calls on CPU): the operands are reordered into the layouts
///                   oneDNN picks (nChw16c, ...), the primitive runs, the result
///                   is reordered back. Primitives are created once per problem
///                   and kept for the life of the process.
///   (otherwise)     loops in this header, each result element summed in double
///                   (vectorised along image rows: forward_loops).
///
/// Deterministic at any thread count, like tenet::gemm: the batch is cut into
/// blocks that depend on the problem alone, each block one single-threaded
/// library call, the blocks in parallel; the weight gradient sums the blocks'
/// partial gradients in block order. The sum over the window runs in the
/// library's order, so results differ from the interpreter's in the last bits.
/// A negative bottom or right padding (rows or columns no window reaches, as in
/// a 1x1 convolution of stride 2 over an even size) is a convolution of the
/// image without them. Should oneDNN refuse a problem, the loops compute it.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "tenet_dnnl.h"
#include "tenet_runtime.h"
#ifdef TENET_DNNL_PRIMITIVES
#define TENET_CONV_DNNL 1
#endif

namespace tenet {

struct Conv2dProblem {
  int64_t batch, in_channels, out_channels, in_h, in_w, out_h, out_w, kernel_h, kernel_w;
  int64_t stride_h, stride_w, pad_top, pad_left;
  /// Channel groups (in_channels for a depthwise convolution): group g's
  /// outputs read its in_channels / groups inputs; weights [out_channels,
  /// in_channels / groups, kernel_h, kernel_w].
  int64_t groups = 1;
  int64_t group_in() const { return in_channels / groups; }
  int64_t group_out() const { return out_channels / groups; }
  int64_t pad_bottom() const { return (out_h - 1) * stride_h + kernel_h - in_h - pad_top; }
  int64_t pad_right() const { return (out_w - 1) * stride_w + kernel_w - in_w - pad_left; }
};

/// The strides of a 4-D tensor, in elements.
struct Strides4 {
  int64_t s[4];
};

/// The name of the backend compiled in, for diagnostics and benchmarks.
inline const char* conv_backend() {
#ifdef TENET_CONV_DNNL
  return "dnnl";
#else
  return "loops";
#endif
}

namespace conv_detail {

enum class Op { Forward, BackwardData, BackwardWeights };

inline int64_t at(const Strides4& st, int64_t a, int64_t b, int64_t c, int64_t d) {
  return a * st.s[0] + b * st.s[1] + c * st.s[2] + d * st.s[3];
}

/// The loops, where oneDNN is not there or refuses a problem: every result
/// element summed in double, in a fixed order that does not depend on the
/// number of threads. The forward and the input gradient keep a row of
/// elements at a time (kRowTile doubles on the stack) and add each term to
/// the whole row, so the loop over the row's columns vectorises; each element
/// still sums its terms in the order of the loops around it. The weight
/// gradient sums along each image row in kWeightLanes partial sums, added in
/// a fixed order at the end. Nothing is allocated.
constexpr int64_t kRowTile = 64;
constexpr int64_t kWeightLanes = 8;

/// The q in [q0, q1) with 0 <= s*q + j - pad < in: [first, end).
inline void window_columns(int64_t s, int64_t j, int64_t pad, int64_t in, int64_t q0, int64_t q1,
                           int64_t& first, int64_t& end) {
  first = std::max(q0, -floordiv<int64_t>(j - pad, s));            // s*q >= pad - j
  end = std::min(q1, floordiv<int64_t>(in - 1 - j + pad, s) + 1);  // s*q <= in - 1 - j + pad
}

inline void forward_loops(const Conv2dProblem& p, const float* x, Strides4 xs, const float* w,
                          Strides4 ws, float* y, Strides4 ys) {
#pragma omp parallel for collapse(2)
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t o = 0; o < p.out_channels; ++o)
      for (int64_t r = 0; r < p.out_h; ++r)
        for (int64_t q0 = 0; q0 < p.out_w; q0 += kRowTile) {
          const int64_t q1 = std::min(p.out_w, q0 + kRowTile);
          double acc[kRowTile] = {};
          const int64_t first_c = o / p.group_out() * p.group_in();
          for (int64_t c = 0; c < p.group_in(); ++c)
            for (int64_t i = 0; i < p.kernel_h; ++i) {
              const int64_t h = p.stride_h * r + i - p.pad_top;
              if (h < 0 || h >= p.in_h) continue;
              const float* row = x + at(xs, n, first_c + c, h, 0);
              for (int64_t j = 0; j < p.kernel_w; ++j) {
                const double wv = w[at(ws, o, c, i, j)];
                int64_t first, end;
                window_columns(p.stride_w, j, p.pad_left, p.in_w, q0, q1, first, end);
                for (int64_t q = first; q < end; ++q)
                  acc[q - q0] += double(row[(p.stride_w * q + j - p.pad_left) * xs.s[3]]) * wv;
              }
            }
          for (int64_t q = q0; q < q1; ++q) y[at(ys, n, o, r, q)] = float(acc[q - q0]);
        }
}

inline void backward_data_loops(const Conv2dProblem& p, const float* dy, Strides4 dys,
                                const float* w, Strides4 ws, float* dx, Strides4 dxs) {
#pragma omp parallel for collapse(2)
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t c = 0; c < p.in_channels; ++c)
      for (int64_t a = 0; a < p.in_h; ++a)
        for (int64_t b0 = 0; b0 < p.in_w; b0 += kRowTile) {
          const int64_t b1 = std::min(p.in_w, b0 + kRowTile);
          double acc[kRowTile] = {};
          const int64_t group = c / p.group_in(), cg = c % p.group_in();
          for (int64_t o = group * p.group_out(); o < (group + 1) * p.group_out(); ++o)
            for (int64_t i = 0; i < p.kernel_h; ++i) {
              const int64_t th = a + p.pad_top - i;
              if (th < 0 || th % p.stride_h != 0 || th / p.stride_h >= p.out_h) continue;
              const float* row = dy + at(dys, n, o, th / p.stride_h, 0);
              for (int64_t j = 0; j < p.kernel_w; ++j) {
                const double wv = w[at(ws, o, cg, i, j)];
                // b with b + pad - j = stride * q, 0 <= q < out_w: from the first
                // such b at or after b0, every stride-th.
                const int64_t shift = p.pad_left - j;
                int64_t b = b0 + ((-(b0 + shift)) % p.stride_w + p.stride_w) % p.stride_w;
                b = std::max(b, -shift);
                const int64_t end = std::min(b1, p.stride_w * (p.out_w - 1) - shift + 1);
                for (; b < end; b += p.stride_w)
                  acc[b - b0] += double(row[(b + shift) / p.stride_w * dys.s[3]]) * wv;
              }
            }
          for (int64_t b = b0; b < b1; ++b) dx[at(dxs, n, c, a, b)] = float(acc[b - b0]);
        }
}

inline void backward_weights_loops(const Conv2dProblem& p, const float* x, Strides4 xs,
                                   const float* dy, Strides4 dys, float* dw, Strides4 dws) {
#pragma omp parallel for collapse(2)
  for (int64_t o = 0; o < p.out_channels; ++o)
    for (int64_t c = 0; c < p.group_in(); ++c)
      for (int64_t i = 0; i < p.kernel_h; ++i)
        for (int64_t j = 0; j < p.kernel_w; ++j) {
          double lanes[kWeightLanes] = {}, acc = 0;
          const int64_t image_c = o / p.group_out() * p.group_in() + c;
          int64_t first, end;
          window_columns(p.stride_w, j, p.pad_left, p.in_w, 0, p.out_w, first, end);
          for (int64_t n = 0; n < p.batch; ++n)
            for (int64_t r = 0; r < p.out_h; ++r) {
              const int64_t h = p.stride_h * r + i - p.pad_top;
              if (h < 0 || h >= p.in_h) continue;
              const float* grad = dy + at(dys, n, o, r, 0);
              const float* row = x + at(xs, n, image_c, h, 0);
              int64_t q = first;
              for (; q + kWeightLanes <= end; q += kWeightLanes)
                for (int64_t l = 0; l < kWeightLanes; ++l)
                  lanes[l] += double(grad[(q + l) * dys.s[3]]) *
                              double(row[(p.stride_w * (q + l) + j - p.pad_left) * xs.s[3]]);
              for (; q < end; ++q)
                acc += double(grad[q * dys.s[3]]) *
                       double(row[(p.stride_w * q + j - p.pad_left) * xs.s[3]]);
            }
          for (int64_t l = 0; l < kWeightLanes; ++l) acc += lanes[l];
          dw[at(dws, o, c, i, j)] = float(acc);
        }
}

/// How many blocks of images a call is cut into, from the problem alone: a
/// divisor of the batch that is at most 8 and leaves each block at least 8
/// MFLOP (so every block is one primitive); the largest power of two among
/// them (2, 4 or 8 threads then share the blocks evenly: a batch of 100 in 5
/// blocks left one of 2 threads idle for a fifth of CapsNet's convolutions),
/// or else the largest divisor.
inline int64_t blocks(const Conv2dProblem& p) {
  const int64_t flops =
      2 * p.batch * p.out_channels * p.out_h * p.out_w * p.group_in() * p.kernel_h * p.kernel_w;
  const int64_t most = std::max<int64_t>(1, std::min<int64_t>(8, flops >> 23));
  int64_t best = 1, power = 1;
  for (int64_t b = 1; b <= most; ++b)
    if (p.batch % b == 0) {
      best = b;
      if ((b & (b - 1)) == 0) power = b;
    }
  return power > 1 ? power : best;
}

#ifdef TENET_CONV_DNNL
using dnnl_detail::bind;
using dnnl_detail::Buffer;
using dnnl_detail::engine;
using dnnl_detail::stream;

/// One operand: the user's layout (dims and strides), the primitive's, and the
/// reorders between them (null where the two are the same).
struct Operand {
  dnnl_memory_desc_t user{}, inner{};
  dnnl_primitive_t to_inner = nullptr, to_user = nullptr;
  bool same = true;
  size_t inner_bytes = 0;
};

/// A problem's primitive for one block of images, with its operands: the
/// image (src or diff_src), the filter (weights or diff_weights) and the
/// result map (dst or diff_dst). `ok` is false when oneDNN refused it.
struct Kernel {
  bool ok = false;
  dnnl_primitive_t primitive = nullptr;
  Operand image, filter, map;
  /// The primitive's scratchpad, which the caller provides (user mode): left
  /// to oneDNN, each call allocates and frees it, and the heap's top pages
  /// fault again every step.
  dnnl_memory_desc_t scratchpad{};
  size_t scratchpad_bytes = 0;
};

/// The operand's reorders between `user` and the primitive's `inner` layout.
inline bool connect(Operand& op, const dnnl_memory_desc_t& user, const dnnl_memory_desc_t* inner,
                    bool input, bool output) {
  if (!inner) return false;
  op.user = user, op.inner = *inner;
  op.inner_bytes = dnnl_memory_desc_get_size(inner);
  op.same = dnnl_memory_desc_equal(&op.user, &op.inner) != 0;
  if (op.same) return true;
  auto reorder = [&](const dnnl_memory_desc_t& from, const dnnl_memory_desc_t& to,
                     dnnl_primitive_t* made) {
    dnnl_primitive_desc_t pd = nullptr;
    if (dnnl_reorder_primitive_desc_create(&pd, &from, engine(), &to, engine(), nullptr) !=
        dnnl_success)
      return false;
    const bool ok = dnnl_primitive_create(made, pd) == dnnl_success;
    dnnl_primitive_desc_destroy(pd);
    return ok;
  };
  return (!input || reorder(op.user, op.inner, &op.to_inner)) &&
         (!output || reorder(op.inner, op.user, &op.to_user));
}

inline dnnl_memory_desc_t plain(int64_t a, int64_t b, int64_t c, int64_t d, const Strides4& s) {
  dnnl_memory_desc_t md{};
  const dnnl_dims_t dims = {a, b, c, d}, strides = {s.s[0], s.s[1], s.s[2], s.s[3]};
  dnnl_memory_desc_init_by_strides(&md, 4, dims, dnnl_f32, strides);
  return md;
}

inline dnnl_memory_desc_t any(int64_t a, int64_t b, int64_t c, int64_t d) {
  dnnl_memory_desc_t md{};
  const dnnl_dims_t dims = {a, b, c, d};
  dnnl_memory_desc_init_by_tag(&md, 4, dims, dnnl_f32, dnnl_format_tag_any);
  return md;
}

/// The filter's layout as oneDNN states it: OIHW, or with groups [G, O/G,
/// C/G, KH, KW] over the same elements; `s`: the user's strides, or null for
/// the layout oneDNN picks.
inline dnnl_memory_desc_t filter_md(const Conv2dProblem& p, const Strides4* s) {
  if (p.groups == 1)
    return s ? plain(p.out_channels, p.group_in(), p.kernel_h, p.kernel_w, *s)
             : any(p.out_channels, p.group_in(), p.kernel_h, p.kernel_w);
  dnnl_memory_desc_t md{};
  const dnnl_dims_t dims = {p.groups, p.group_out(), p.group_in(), p.kernel_h, p.kernel_w};
  if (!s) {
    dnnl_memory_desc_init_by_tag(&md, 5, dims, dnnl_f32, dnnl_format_tag_any);
  } else {
    const dnnl_dims_t strides = {s->s[0] * p.group_out(), s->s[0], s->s[1], s->s[2], s->s[3]};
    dnnl_memory_desc_init_by_strides(&md, 5, dims, dnnl_f32, strides);
  }
  return md;
}

/// Creates the kernel of `op` for a block of `p.batch` images.
inline void make_kernel(Kernel& k, Op op, const Conv2dProblem& p, const Strides4& image_strides,
                        const Strides4& filter_strides, const Strides4& map_strides) {
  if (!engine() || p.pad_bottom() < 0 || p.pad_right() < 0) return;
  const dnnl_memory_desc_t image_user =
                               plain(p.batch, p.in_channels, p.in_h, p.in_w, image_strides),
                           filter_user = filter_md(p, &filter_strides),
                           map_user = plain(p.batch, p.out_channels, p.out_h, p.out_w, map_strides);
  const dnnl_memory_desc_t image = any(p.batch, p.in_channels, p.in_h, p.in_w),
                           filter = filter_md(p, nullptr),
                           map = any(p.batch, p.out_channels, p.out_h, p.out_w);
  const dnnl_dims_t strides = {p.stride_h, p.stride_w}, pad_l = {p.pad_top, p.pad_left},
                    pad_r = {p.pad_bottom(), p.pad_right()};
  dnnl_convolution_desc_t forward{}, backward{};
  if (dnnl_convolution_forward_desc_init(&forward, dnnl_forward_training, dnnl_convolution_direct,
                                         &image, &filter, nullptr, &map, strides, pad_l,
                                         pad_r) != dnnl_success)
    return;
  dnnl_primitive_desc_t forward_pd = nullptr, pd = nullptr;
  dnnl_primitive_attr_t attr = nullptr;
  if (dnnl_primitive_attr_create(&attr) != dnnl_success) return;
  const std::unique_ptr<dnnl_primitive_attr, decltype(&dnnl_primitive_attr_destroy)> owned(
      attr, &dnnl_primitive_attr_destroy);
  if (dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) != dnnl_success ||
      dnnl_primitive_desc_create(&forward_pd, &forward, attr, engine(), nullptr) != dnnl_success)
    return;
  dnnl_status_t status = dnnl_success;
  if (op == Op::Forward) {
    pd = forward_pd, forward_pd = nullptr;
  } else if (op == Op::BackwardData) {
    status = dnnl_convolution_backward_data_desc_init(&backward, dnnl_convolution_direct, &image,
                                                      &filter, &map, strides, pad_l, pad_r);
  } else {
    status = dnnl_convolution_backward_weights_desc_init(
        &backward, dnnl_convolution_direct, &image, &filter, nullptr, &map, strides, pad_l, pad_r);
  }
  if (op != Op::Forward && status == dnnl_success)
    status = dnnl_primitive_desc_create(&pd, &backward, attr, engine(), forward_pd);
  if (forward_pd) dnnl_primitive_desc_destroy(forward_pd);
  if (status != dnnl_success || !pd) return;
  auto md = [&](dnnl_query_t what) { return dnnl_primitive_desc_query_md(pd, what, 0); };
  bool ok = false;
  if (op == Op::Forward)
    ok = connect(k.image, image_user, md(dnnl_query_src_md), true, false) &&
         connect(k.filter, filter_user, md(dnnl_query_weights_md), true, false) &&
         connect(k.map, map_user, md(dnnl_query_dst_md), false, true);
  else if (op == Op::BackwardData)
    ok = connect(k.image, image_user, md(dnnl_query_diff_src_md), false, true) &&
         connect(k.filter, filter_user, md(dnnl_query_weights_md), true, false) &&
         connect(k.map, map_user, md(dnnl_query_diff_dst_md), true, false);
  else
    ok = connect(k.image, image_user, md(dnnl_query_src_md), true, false) &&
         connect(k.filter, filter_user, md(dnnl_query_diff_weights_md), false, true) &&
         connect(k.map, map_user, md(dnnl_query_diff_dst_md), true, false);
  if (const dnnl_memory_desc_t* scratchpad = md(dnnl_query_scratchpad_md)) {
    k.scratchpad = *scratchpad;
    k.scratchpad_bytes = dnnl_memory_desc_get_size(scratchpad);
  }
  k.ok = ok && dnnl_primitive_create(&k.primitive, pd) == dnnl_success;
  dnnl_primitive_desc_destroy(pd);
}

/// The kernel for (op, block problem, strides), created on first use and kept.
inline const Kernel& kernel(Op op, const Conv2dProblem& p, const Strides4& image_strides,
                            const Strides4& filter_strides, const Strides4& map_strides) {
  static std::mutex mutex;
  static auto* kernels = new std::map<std::array<int64_t, 27>, std::unique_ptr<Kernel>>();
  // A fixed-size key: looking a kernel up allocates nothing.
  std::array<int64_t, 27> key = {int64_t(op), p.batch,    p.in_channels, p.out_channels, p.in_h,
                                 p.in_w,      p.out_h,    p.out_w,       p.kernel_h,     p.kernel_w,
                                 p.stride_h,  p.stride_w, p.pad_top,     p.pad_left,     p.groups};
  size_t at = 15;
  for (const Strides4* s : {&image_strides, &filter_strides, &map_strides})
    for (int64_t stride : s->s) key[at++] = stride;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<Kernel>& k = (*kernels)[key];
  if (!k) {
    k = std::make_unique<Kernel>();
    // Created for one thread: a primitive plans its threads when it is created
    // (the weight gradient's then wait for each other at a barrier), and it runs
    // on one thread per block.
#ifdef _OPENMP
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
#endif
    make_kernel(*k, op, p, image_strides, filter_strides, map_strides);
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
  }
  return *k;
}

/// Per thread and kernel: memory objects, created once and pointed at the
/// data of each call (dnnl_memory_set_data_handle), and the buffers of the
/// operands in the primitive's layouts; so that a steady call allocates nothing.
struct Memories {
  dnnl_memory_t image_user = nullptr, image = nullptr, filter_user = nullptr, filter = nullptr,
                map_user = nullptr, map = nullptr, scratchpad = nullptr;
  Buffer image_buffer, filter_buffer, map_buffer, scratchpad_buffer;
  Buffer partials[8];  // BackwardWeights, on the calling thread: one per block
};

inline Memories& memories(const Kernel& k) {
  thread_local std::map<const Kernel*, Memories> by_kernel;
  return by_kernel[&k];
}

inline bool run(dnnl_primitive_t p, std::initializer_list<dnnl_exec_arg_t> args) {
  return dnnl_primitive_execute(p, stream(), int(args.size()), args.begin()) == dnnl_success;
}

/// Runs the kernel's primitive with `args` and the thread's scratchpad.
inline bool run(const Kernel& k, Memories& m, const std::array<dnnl_exec_arg_t, 3>& args) {
  return dnnl_detail::execute(k.primitive, args, k.scratchpad, k.scratchpad_bytes, m.scratchpad,
                              m.scratchpad_buffer);
}

/// The operand's data in the primitive's layout, through `inner`: the user's
/// data itself, or its reorder into `buffer`.
inline bool input(const Operand& op, dnnl_memory_t& user, dnnl_memory_t& inner, Buffer& buffer,
                  const void* data) {
  if (op.same) return bind(inner, op.inner, data);
  return bind(user, op.user, data) && bind(inner, op.inner, buffer.get(op.inner_bytes)) &&
         run(op.to_inner, {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, inner}});
}

/// Where the primitive writes the operand (`inner`): the user's data itself,
/// or `buffer`, reordered into it by `output_done`.
inline bool output(const Operand& op, dnnl_memory_t& user, dnnl_memory_t& inner, Buffer& buffer,
                   void* data) {
  if (op.same) return bind(inner, op.inner, data);
  return bind(user, op.user, data) && bind(inner, op.inner, buffer.get(op.inner_bytes));
}

inline bool output_done(const Operand& op, dnnl_memory_t user, dnnl_memory_t inner) {
  return op.same || run(op.to_user, {{DNNL_ARG_FROM, inner}, {DNNL_ARG_TO, user}});
}

/// The problem oneDNN is given. A negative bottom (right) padding: the last
/// rows (columns) of the image are in no window. oneDNN refuses it, so it gets
/// the image without them (the same strides); their input gradient is 0, set here.
inline Conv2dProblem without_unread_rows(Op op, const Conv2dProblem& problem, Strides4 image_s,
                                         float* result) {
  Conv2dProblem p = problem;
  p.in_h += std::min<int64_t>(0, problem.pad_bottom());
  p.in_w += std::min<int64_t>(0, problem.pad_right());
  if (op == Op::BackwardData && (p.in_h < problem.in_h || p.in_w < problem.in_w)) {
    for (int64_t n = 0; n < p.batch; ++n)
      for (int64_t c = 0; c < p.in_channels; ++c)
        for (int64_t h = 0; h < problem.in_h; ++h)
          for (int64_t w = h < p.in_h ? p.in_w : 0; w < problem.in_w; ++w)
            result[at(image_s, n, c, h, w)] = 0.0f;
  }
  return p;
}

/// Runs `op` on one block of images, from image `first`, with the thread's
/// memories; the filter is already in the primitive's layout (`filter_inner`),
/// and a weight gradient goes to the block's `partial`.
inline bool run_block(Op op, const Kernel& k, int64_t first, const float* image, Strides4 image_s,
                      const void* filter_inner, const float* map, Strides4 map_s, float* result,
                      void* partial) {
  Memories& m = memories(k);
  if (op == Op::Forward)
    return input(k.image, m.image_user, m.image, m.image_buffer, image + first * image_s.s[0]) &&
           bind(m.filter, k.filter.inner, filter_inner) &&
           output(k.map, m.map_user, m.map, m.map_buffer, result + first * map_s.s[0]) &&
           run(k, m,
               {{{DNNL_ARG_SRC, m.image}, {DNNL_ARG_WEIGHTS, m.filter}, {DNNL_ARG_DST, m.map}}}) &&
           output_done(k.map, m.map_user, m.map);
  if (op == Op::BackwardData)
    return input(k.map, m.map_user, m.map, m.map_buffer, map + first * map_s.s[0]) &&
           bind(m.filter, k.filter.inner, filter_inner) &&
           output(k.image, m.image_user, m.image, m.image_buffer, result + first * image_s.s[0]) &&
           run(k, m,
               {{{DNNL_ARG_DIFF_DST, m.map},
                 {DNNL_ARG_WEIGHTS, m.filter},
                 {DNNL_ARG_DIFF_SRC, m.image}}}) &&
           output_done(k.image, m.image_user, m.image);
  return input(k.image, m.image_user, m.image, m.image_buffer, image + first * image_s.s[0]) &&
         input(k.map, m.map_user, m.map, m.map_buffer, map + first * map_s.s[0]) &&
         bind(m.filter, k.filter.inner, partial) &&
         run(k, m,
             {{{DNNL_ARG_SRC, m.image},
               {DNNL_ARG_DIFF_DST, m.map},
               {DNNL_ARG_DIFF_WEIGHTS, m.filter}}});
}

/// The weight gradient: the blocks' `partials` summed in block order, in the
/// primitive's layout (every block has the same one), then reordered into `result`.
inline bool sum_partials(const Kernel& k, Memories& caller, void* const* partials, int64_t nb,
                         float* result) {
  float* sum = static_cast<float*>(partials[0]);
  const size_t count = k.filter.inner_bytes / sizeof(float);
  for (int64_t b = 1; b < nb; ++b) {
    const float* part = static_cast<const float*>(partials[b]);
    for (size_t e = 0; e < count; ++e) sum[e] += part[e];
  }
  if (k.filter.same) {
    std::copy(sum, sum + count, result);
    return true;
  }
  return bind(caller.filter, k.filter.inner, sum) &&
         bind(caller.filter_user, k.filter.user, result) &&
         output_done(k.filter, caller.filter_user, caller.filter);
}

/// Runs `op` in blocks of images through oneDNN; false when it could not (the
/// caller then runs the loops, which overwrite every result element).
inline bool library(Op op, const Conv2dProblem& problem, const float* image, Strides4 image_s,
                    const float* filter, Strides4 filter_s, const float* map, Strides4 map_s,
                    float* result) {
  const Conv2dProblem p = without_unread_rows(op, problem, image_s, result);
  const int64_t nb = blocks(p);
  Conv2dProblem block = p;
  block.batch = p.batch / nb;
  const Kernel& k = kernel(op, block, image_s, filter_s, map_s);
  if (!k.ok) return false;
  Memories& caller = memories(k);
  // The filter, shared by every block, is read once into the primitive's layout.
  if (op != Op::BackwardWeights &&
      !input(k.filter, caller.filter_user, caller.filter, caller.filter_buffer, filter))
    return false;
  const void* filter_inner = op != Op::BackwardWeights && k.filter.same
                                 ? static_cast<const void*>(filter)
                                 : caller.filter_buffer.data.get();
  void* partials[8] = {};
  for (int64_t b = 0; op == Op::BackwardWeights && b < nb; ++b)
    if (!(partials[b] = caller.partials[b].get(k.filter.inner_bytes))) return false;
  int failures = 0;
#ifdef _OPENMP
  const int threads = omp_get_max_threads();
#endif
#pragma omp parallel for reduction(+ : failures) if (nb > 1 && omp_get_level() == 0)
  for (int64_t b = 0; b < nb; ++b) {
#ifdef _OPENMP
    omp_set_num_threads(1);  // one thread per library call (deterministic sums)
#endif
    const bool fine = run_block(op, k, b * block.batch, image, image_s, filter_inner, map, map_s,
                                result, partials[b]);
    failures += fine ? 0 : 1;
  }
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
  if (failures > 0) return false;
  if (op != Op::BackwardWeights) return true;
  return sum_partials(k, caller, partials, nb, result);
}
#endif

}  // namespace conv_detail

inline void conv2d_forward(const Conv2dProblem& p, const float* x, Strides4 xs, const float* w,
                           Strides4 ws, float* y, Strides4 ys) {
#ifdef TENET_CONV_DNNL
  if (conv_detail::library(conv_detail::Op::Forward, p, x, xs, w, ws, nullptr, ys, y)) return;
#endif
  conv_detail::forward_loops(p, x, xs, w, ws, y, ys);
}

inline void conv2d_backward_data(const Conv2dProblem& p, const float* dy, Strides4 dys,
                                 const float* w, Strides4 ws, float* dx, Strides4 dxs) {
#ifdef TENET_CONV_DNNL
  if (conv_detail::library(conv_detail::Op::BackwardData, p, nullptr, dxs, w, ws, dy, dys, dx))
    return;
#endif
  conv_detail::backward_data_loops(p, dy, dys, w, ws, dx, dxs);
}

inline void conv2d_backward_weights(const Conv2dProblem& p, const float* x, Strides4 xs,
                                    const float* dy, Strides4 dys, float* dw, Strides4 dws) {
#ifdef TENET_CONV_DNNL
  if (conv_detail::library(conv_detail::Op::BackwardWeights, p, x, xs, nullptr, dws, dy, dys, dw))
    return;
#endif
  conv_detail::backward_weights_loops(p, x, xs, dy, dys, dw, dws);
}

}  // namespace tenet
