/// \file
/// The lowered form of a function, and the lowering stages in order: what
/// every backend receives before it prints anything (lower/README.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ir/ir.h"
#include "lower/lowered_function.h"
#include "lower/updates.h"

namespace tenet::lower {

/// Stage 1: the lowered form of `fn` with its liveness, nothing lowered yet.
LoweredFunction find_liveness(const ir::Function& fn);

/// Every stage in order but the loop tree: find_liveness, lower_gemms (gemm.h),
/// lower_scatters (scatter.h), lower_convs (conv.h), plan_memory (memory_plan.h).
LoweredFunction lower(const ir::Function& fn, int64_t pack_budget_bytes);

/// The lowered form as text (for --dump-after): each GEMM's plan, its
/// buffers, chunking, and the statements around the calls.
std::string print(const LoweredFunction& lowered);

}  // namespace tenet::lower
