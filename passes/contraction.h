/// \file
/// `contraction`: finds the statements that are matrix products in disguise
/// and marks the large ones to be computed by the GEMM library
/// (runtime/tenet_gemm.h), with the plan the code generator follows.
///
/// A contraction is a Compute statement
///
///     C(out) +=! A(...) * B(...)        (or += onto an init)
///
/// whose body is exactly the product of two float reads of the result's type.
/// Its indices fall into four groups: an out index read by A only is a row of
/// the GEMM (M), one read by B only a column (N), one read by both a batch
/// index (one GEMM per value: `loops`), and the reduce indices are the sum (K).
/// (A and B are the reads in whichever order makes C's columns its innermost
/// dimension.) Rejected: an out or reduce index read by neither factor, no
/// M and no N index (batched dot products), no K index (outer products).
///
/// Each operand is used in place when its indices are plain (`x(i, k)`) and
/// each group lies in adjacent dimensions of its storage order, in group order,
/// with one group innermost (transposed when it is the row group); otherwise
/// generated loops pack it into a dense [loops][rows][cols] buffer: im2col for
/// affine reads like `x(b, c, 2*y + ky, 2*x + kx)`, zeros for guarded reads
/// outside the tensor. C is written in place, or computed into a dense buffer
/// and copied (plus init) into the result. When the whole of C cannot be one
/// matrix, out indices of one factor may become loops instead (conv over NCHW:
/// one GEMM per image), provided each GEMM keeps at least kMinLoopedGemmSide
/// rows and columns; otherwise C is packed.
///
/// A guarded factor whose index mixes an out index with a strided reduce
/// index (the input gradient of a strided convolution, `w?(o, c, h - 2*i,
/// ...)`) would pack mostly zeros; such a statement is split instead: a GEMM
/// into a fresh tensor of columns, then a guarded gather (col2im) of the
/// result from it (contraction_split.h). So is an unstrided one whose columns
/// are no larger than its packed factor would be.
///
/// A 2-D convolution statement (forward or either gradient, ir/conv_plan.h)
/// small enough for the library rule below gets a convolution plan
/// (Annotations::conv) instead of a GEMM plan.
///
/// Lowered when one GEMM does at least kGemmMinWork multiply-adds (M*N*K); when
/// that depends on size parameters, the generated code decides per call.
///
/// Expects: a verified function (after simplify and dce). Guarantees: the IR
/// is unchanged except for the plans (ir/gemm_plan.h, ir/conv_plan.h) in the
/// annotations of lowered statements (Annotations::gemm, ::conv), decided per call when the work
/// depends on sizes (GemmPlan::per_call_min_work), so the interpreter, which
/// ignores annotations, stays the oracle. The plans of statements that are no
/// longer lowered are removed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/conv_plan.h"
#include "ir/gemm_plan.h"
#include "ir/ir.h"

namespace tenet::passes {

/// One GEMM must do at least this many multiply-adds to be worth a library
/// call (the measurements behind it: docs/performance.md, "Threshold").
constexpr int64_t kGemmMinWork = 65536;
/// Looping over an M or N index is chosen only if each GEMM keeps this many
/// rows and columns; thinner GEMMs make the library re-pack the other operand
/// once per call, so one large GEMM with a packed result is faster then.
/// 64, not OpenBLAS's 128, since oneDNN (runtime/tenet_gemm.h) runs the MNIST
/// CNN's conv2 per image (64 x 576 x 288) faster than as one packed GEMM and
/// the result needs no unpacking (docs/performance.md).
constexpr int64_t kMinLoopedGemmSide = 64;

/// A matrix-vector product (no M or no N index) is a GEMM only when its sum
/// has at least this many terms; shorter ones (a depthwise convolution's nine
/// taps) run as loops, which need no packed copy of the matrix.
constexpr int64_t kMinMatrixVectorSum = 64;

/// A factor packed for a GEMM may hold at most this many times the elements
/// of its tensor (sizes at 64); more is a small tensor spread over a mostly
/// zero matrix through a window (a depthwise convolution's weight in its
/// input gradient: 9 taps per channel as a 256 x 1024 matrix), which loops do
/// faster. An im2col matrix holds each input element once per tap (9x for
/// 3x3, 49x for ResNet's 7x7 stem).
constexpr int64_t kMaxPackExpansion = 64;

/// A 2-D convolution (or one of its gradients, ir/conv_plan.h) runs in the
/// convolution library (runtime/tenet_conv.h: oneDNN's direct convolution)
/// when every output element's window, in_channels x kernel_h x kernel_w, and
/// every input gradient's, out_channels x kernel_h x kernel_w, has at most
/// kMaxLibraryConvWindow terms (a gradient: kMaxLibraryConvGradientWindow).
/// Above it the GEMM over im2col columns has a long enough sum to run near the
/// GEMM floor, faster than the library (docs/performance.md, "Convolutions
/// through oneDNN": 3x3 with 64 channels, 576 terms, 2.2x faster in oneDNN;
/// CapsNet's PrimaryCaps, 20736 terms, faster as a GEMM; ResNet-18's 512
/// channels, 4608 terms: the forward faster in oneDNN, the gradients not).
constexpr int64_t kMaxLibraryConvWindow = 4608;
/// Below this many output positions per image (and with a window of at least
/// 1024 terms, ungrouped) a convolution is a GEMM over im2col columns instead.
constexpr int64_t kMinLibraryConvOutputs = 16;
constexpr int64_t kMaxLibraryConvGradientWindow = 2304;

/// Whether a convolution's plan is taken (the rule above; channels and
/// kernel sizes must be constants).
bool library_convolution(const ir::ConvPlan& plan);

/// The plan for a statement, whatever its size (always a GEMM), or nullopt
/// when it is not a contraction of the form above.
std::optional<ir::GemmPlan> plan_contraction(const ir::Compute& c);

void contraction(ir::Function& fn);

/// The same decisions with no library convolution: a convolution is a GEMM
/// where plan_contraction finds one (im2col), else a loop nest. The GPU
/// targets' pass `gpu_contraction` (driver/target_cuda.cpp) until their
/// convolutions call cuDNN.
void contraction_without_convolutions(ir::Function& fn);

}  // namespace tenet::passes
