/// \file
/// The operator zoo's gradients (tests/zoo/zoo_table.cpp) compiled for one
/// GPU target into one unit, next to the unoptimised gradients the
/// interpreter runs as the reference; built once per target and test binary.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "jit/jit.h"

namespace tenet::zoo {

struct TargetZoo {
  std::map<std::string, size_t> index;  // case_id -> position
  std::vector<ir::Function> reference;  // as AD made them
  std::vector<std::string> names;
  ir::Module module;  // optimised for the target
  std::vector<jit::CompiledFunction> compiled;
  /// Why it could not be built or loaded (a UsageError's message: no GPU).
  std::string error;
  bool unavailable = false;  // the target cannot run here (a UsageError)
};

/// The zoo built and loaded for `target` ("cuda-emulated", "cuda").
const TargetZoo& zoo_on(const std::string& target);

/// The JIT's options for the tests: the cache in $TENET_CACHE_DIR, else the build folder's.
jit::JitOptions test_jit_options();

}  // namespace tenet::zoo
