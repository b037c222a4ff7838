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

#include "tenet_conv_loops.h"  // Conv2dProblem, Strides4, the loops
#include "tenet_dnnl.h"
#include "tenet_parallel.h"
#ifdef TENET_PROFILE
#include "tenet_profile.h"
#endif
#include "tenet_runtime.h"
#ifdef TENET_DNNL_PRIMITIVES
#define TENET_CONV_DNNL 1
#endif

namespace tenet {

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

/// The most blocks a weight gradient is cut into: each block's partial sum is
/// a copy of the weights, at most 64 of them and 64 MiB in all.
constexpr int64_t kMostWeightPartials = 64;
constexpr int64_t kMostPartialBytes = int64_t(64) << 20;

/// How many blocks of images a call is cut into, from the problem and the
/// machine alone (tenet_parallel.h): a divisor of the batch (so that every
/// block is one primitive) of at most parallel_pieces(), each block at least
/// 8 MFLOP on a machine of up to 4 cores (8 pieces), less with more (2 MFLOP
/// at 32 pieces: the MNIST CNN's first convolution, 25 MFLOP, ran in 2
/// blocks), and for the weight gradient partial sums within
/// kMostPartialBytes; among those, the one that keeps the machine's cores
/// busiest, the larger on a tie (a batch of 100 in 5 blocks left one of 2
/// threads idle for a fifth of CapsNet's convolutions: 4 blocks there; on 16
/// cores 25 blocks keep 16 threads 78% busy where 4 kept a quarter of them).
inline int64_t blocks(Op op, const Conv2dProblem& p) {
  const int64_t flops =
      2 * p.batch * p.out_channels * p.out_h * p.out_w * p.group_in() * p.kernel_h * p.kernel_w;
  int64_t most = std::min<int64_t>(parallel_pieces(), flops / least_piece_flops(int64_t(1) << 23));
  if (op == Op::BackwardWeights) {
    const int64_t weight_bytes =
        p.out_channels * p.group_in() * p.kernel_h * p.kernel_w * int64_t(sizeof(float));
    most = std::min(
        {most, kMostWeightPartials, kMostPartialBytes / std::max<int64_t>(1, weight_bytes)});
  }
  const int64_t cores = parallel_cores();
  int64_t best = 1;
  double best_use = 0;
  for (int64_t b = 1; b <= most; ++b) {
    if (p.batch % b != 0) continue;
    const double use = double(b) / double((b + cores - 1) / cores * cores);
    if (use >= best_use) {
      best = b;
      best_use = use;
    }
  }
  return best;
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
  Buffer partials[kMostWeightPartials];  // BackwardWeights, on the calling thread: one per block
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
  const int64_t count = int64_t(k.filter.inner_bytes / sizeof(float));
  // Every element adds the blocks in block order; pieces of 4096 elements
  // shared among the threads.
  const int64_t pieces = (count + 4095) / 4096;
#pragma omp parallel for if (pieces > 1 && count * (nb - 1) >= (int64_t(1) << 18))
  for (int64_t piece = 0; piece < pieces; ++piece) {
    const int64_t first = piece * 4096, end = std::min(count, first + 4096);
    for (int64_t b = 1; b < nb; ++b) {
      const float* part = static_cast<const float*>(partials[b]);
      for (int64_t e = first; e < end; ++e) sum[e] += part[e];
    }
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
  const int64_t nb = blocks(op, p);
#if defined(TENET_PROFILE) && defined(_OPENMP)
  if (omp_get_level() == 0) profile::note_pieces(nb, true);  // not one per thread
#endif
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
  void* partials[kMostWeightPartials] = {};
  for (int64_t b = 0; op == Op::BackwardWeights && b < nb; ++b)
    if (!(partials[b] = caller.partials[b].get(k.filter.inner_bytes))) return false;
  int failures = 0;
#ifdef _OPENMP
  const int threads = omp_get_max_threads();
#endif
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : failures) if (nb > 1 && omp_get_level() == 0)
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
