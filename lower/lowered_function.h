/// \file
/// The lowered form of a function (the data every lowering stage fills in),
/// below the stages: the stage headers forward-declare it, their sources
/// include this header, and lowered.h (the stages in order) includes it too,
/// so no header of lower/ includes one that includes it back.
#pragma once

#include <map>

#include "ir/ir.h"
#include "lower/conv.h"
#include "lower/gemm.h"
#include "lower/liveness.h"
#include "lower/loop_tree.h"
#include "lower/memory_plan.h"
#include "lower/scatter.h"

namespace tenet::lower {

/// A function's lowered form: the function (which must outlive it), the
/// statements that contribute to its outputs, and the lowering of each live
/// statement (at any depth) with a GEMM plan.
struct LoweredFunction {
  const ir::Function* function = nullptr;
  Liveness liveness;
  std::map<const ir::Stmt*, GemmLowering> gemms;
  std::map<const ir::Stmt*, IndexScatter> scatters;  // sums run as scatters (scatter.h)
  std::map<const ir::Stmt*, ConvLowering> convs;     // library convolutions (conv.h)
  MemoryPlan memory;
  LoopTree loops;  // lower_loops (loops.h)
};

}  // namespace tenet::lower
