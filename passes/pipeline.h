/// \file
/// The optimisation passes, in order: the part of the compiler's table of
/// contents (driver/driver.cpp) between AD and code generation. The driver
/// runs each as a stage, verifying after it (`--dump-after=PASS`).
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

/// The passes in the order they run.
const std::vector<Pass>& pipeline();

}  // namespace tenet::passes
