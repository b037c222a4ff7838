/// \file
/// The optimisation passes every target shares, in order: the part of the
/// compiler's table of contents (driver/driver.cpp) between AD and lowering.
/// The driver runs each as a stage, verifying after it (`--dump-after=PASS`),
/// then the chosen target's own passes (driver/target.h: the CPU target's
/// `schedule`, passes/schedule.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tenet::passes {

struct Pass {
  const char* name;
  const char* summary;
  std::function<void(ir::Function&)> run;
};

/// The shared passes in the order they run.
const std::vector<Pass>& pipeline();

}  // namespace tenet::passes
