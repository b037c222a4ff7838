/// \file
/// Part of stage `map_kernels` (lower/kernels.h): the second mapping rule of
/// docs/cuda.md, a group of threads per reduced element. A kernel whose
/// threads each run one reduction (an accumulator started from the
/// identity, reduce loops that update only it, then the stores) becomes a
/// grouped kernel: each element of its grid is computed by `lanes` threads
/// of one block, chosen at launch by the shape alone (runtime/tenet_group.h,
/// group_lanes: more lanes where there are few elements and long
/// reductions). Lane l runs iterations l, l + lanes, ... of the reduce loops
/// (their rectangular prefix, collapsed into one iteration index: GpuLane
/// loops), the lanes' accumulators are combined by a fixed tree
/// (GroupReduce: warp shuffles, then the block's shared memory) and the
/// group's first lane stores (GroupLeader). No atomics: the bits depend on
/// the shape (through lanes), never on the schedule.
///
/// Left as they are: reductions of known length below kMinGroupedLength,
/// accumulators that start from a tensor's value, reduce loops whose bounds
/// depend on the element (a window narrowed to its border), kernels that run
/// more than one statement per thread.
#pragma once

#include <cstdint>

#include "lower/loop_tree.h"

namespace tenet::lower {

/// Reductions of a known length below this stay one thread per element.
constexpr int64_t kMinGroupedLength = 64;

/// Turns `kernel` (a Kernel node map_kernels built, its grid loops mapped)
/// into a grouped kernel when its threads each run one reduction; returns
/// whether it did.
bool group_reduction(Node& kernel, LoopTree& tree);

/// Whether `n`, run by one thread (device code outside any parallel loop: a
/// scalar loss), is one reduction a group could run: map_kernels gives it a
/// kernel of its own instead of sharing one thread's kernel with its
/// neighbours.
bool is_group_reduction(const Node& n);

}  // namespace tenet::lower
