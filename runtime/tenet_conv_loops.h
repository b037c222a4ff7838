/// \file
/// The convolution problem of tenet_conv.h and the loops that compute it
/// where oneDNN is not there or refuses a problem: every result element summed
/// in double, in a fixed order that does not depend on the number of threads.
#pragma once

#include <algorithm>
#include <cstdint>

#include "tenet_runtime.h"

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

namespace conv_detail {

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

}  // namespace conv_detail
}  // namespace tenet
