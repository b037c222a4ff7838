/// \file
/// How a 2-D convolution statement is computed by the convolution library
/// (runtime/tenet_conv.h): the typed plan the `contraction` pass attaches to
/// a statement (Annotations::conv) and the code generator follows.
///
/// The three statements of a convolution and its gradients, over NCHW images
/// and OIHW filters (S: stride, P: padding at the top or left; `?` reads are
/// guarded, zero outside the tensor; each sum starts from 0, `+=!`):
///
///   Forward           y(n, o, p, q)    +=! x?(n, c, S*p + i - P, S*q + j - P) * w(o, c, i, j)
///   BackwardWeights   dw(o, c, i, j)   +=! dy(n, o, p, q) * x?(n, c, S*p + i - P, S*q + j - P)
///   BackwardData      dx(n, c, a, b)   +=! dy?(n, o, a - i + P, b - j + P) * w(o, c, i, j)   (S =
///   1)
///                     dx(n, c, a, b)   +=! dy(n, o, p, q) * w?(o, c, a - S*p + P, b - S*q + P)
///
/// and the depthwise forms, where the image's channel is the filter's (and
/// the result's) and the filter has one input channel:
///
///   Forward           y(n, g, p, q)    +=! x?(n, g, S*p + i - P, S*q + j - P) * w(g, 0, i, j)
///   BackwardWeights   dw(g, z, i, j)   +=! dy(n, g, p, q) * x?(n, g, S*p + i - P, S*q + j - P)
///   BackwardData      dx(n, g, a, b)   +=! dy?(n, g, a - i + P, b - j + P) * w(g, 0, i, j)   (S =
///   1)
///
/// (z: the filter's one input channel, of extent 1, read by neither factor: what AD
/// makes of `w(g, 0, i, j)`),
///
/// in either order of the factors, with every reduce index over the whole
/// extent of the tensor dimension it runs along, and float32 throughout. The
/// bottom and right paddings follow from the sizes: (OH - 1)*S + KH - H - P.
///
/// A sum that starts from a tensor instead of 0 (Compute::init, row-major) is
/// planned too: AD accumulates the input gradient of a block's first
/// convolution onto the shortcut's. The library computes the sum alone, the
/// generated code adds the start to it afterwards: the terms reassociated,
/// as the library's own order already reassociates them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/ir.h"

namespace tenet::ir {

enum class ConvRole { Forward, BackwardData, BackwardWeights };
const char* role_name(ConvRole role);  // "forward", "backward_data", "backward_weights"

struct ConvPlan {
  ConvRole role = ConvRole::Forward;
  /// Which factor of the body's product (0: the left, 1: the right) is each
  /// operand: the image x, the filter w, the gradient dy; -1 for the
  /// operand the role computes (the statement's result).
  int image = -1, filter = -1, grad = -1;
  /// The problem as the library states it: src [batch, in_channels, in_h,
  /// in_w], weights [out_channels, in_channels, kernel_h, kernel_w], dst
  /// [batch, out_channels, out_h, out_w].
  SizeExpr batch, in_channels, out_channels, in_h, in_w, out_h, out_w, kernel_h, kernel_w;
  int64_t stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
  /// Channel groups: 1, or in_channels for a depthwise convolution (each
  /// channel its own filter, weights [channels, 1, kernel_h, kernel_w]).
  SizeExpr groups = 1;
};

/// The plan when `c` is one of the statements above, else nullopt.
std::optional<ConvPlan> plan_convolution(const Compute& c);

/// "forward: y[B, 64, 32, 32] = conv(x[B, 64, 32, 32], w[64, 64, 3, 3], stride 1, pad 1)".
std::string describe(const ConvPlan& plan, const Compute& statement);

}  // namespace tenet::ir
