/// \file
/// Stage `map_kernels` (GPU targets, driver/target_cuda.cpp): splits a
/// function's loop tree (lower/loop_tree.h) into host code and kernels, the
/// code a device runs with a grid of threads. The mapping rule is the first
/// of docs/cuda.md's: one thread per element.
///
///   - A parallel loop (the loop tree's promise: each iteration computes its
///     own elements, in the serial order) becomes a kernel. Its threads
///     cover it and the loops nested in it that are independent too (out
///     loops, loops a nest's statements share) while each of those is the
///     only thing its parent runs besides locals: their iterations are
///     collapsed into one linear thread index (GpuThread loops, outermost
///     first). What is inside the innermost of them (reduce loops, an
///     accumulator, the stores) runs on its thread, serially, in the order
///     of the loop tree: a reduction never races and never uses atomics, so
///     its bits do not depend on the grid.
///   - Code outside any parallel loop that must run on the device (a scalar
///     reduction, a serial loop) becomes a kernel of one thread.
///   - Library calls (GEMM, convolution, views), the loops of ir::Loop
///     statements, comments and the checks around computed indices stay on
///     the host; the loops of the statements a library call runs (packing,
///     a convolution's start) are mapped the same way.
///   - The locals a kernel reads that are declared on the host side of it
///     (hoisted reads, index locals before a parallel loop) are declared
///     again at the top of the kernel: every thread computes them.
///
/// For GPU targets. Expects: a tree built by lower_loops with parallel loops
/// wherever the work may be split (LoopOptions::parallel, min work 0).
/// Guarantees: every Assign, serial loop and accumulator is inside a Kernel;
/// no Kernel contains a Call, a CarriedLoop or another Kernel; a kernel's
/// GpuThread loops are rectangular (bounds of sizes and extents only), and
/// its threads compute what the tree's serial order computes.
#pragma once

#include "lower/loop_tree.h"

namespace tenet::lower {

/// Stage `map_kernels`: the tree's kernels, in place.
void map_kernels(LoopTree& tree, const KernelOptions& options);

}  // namespace tenet::lower
