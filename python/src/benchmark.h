/// \file
/// Call-overhead measurement for examples/python_overhead.py: the same
/// generated code timed from C++, to set against calls from Python.
///
/// Expects: a compiled Kernel and inputs that bind to it. Guarantees: CPU
/// seconds per call (process CPU time, all threads), the median of `rounds`
/// rounds of `calls` calls each, for
///   run:        CompiledFunction::run, the one-call path (binds and checks the
///               inputs, allocates outputs and workspace, runs);
///   executable: jit::Executable::run, bound once (checks the inputs'
///               shapes, runs; allocates nothing);
///   raw:        Executable::run_raw, the generated code alone (the floor).
#pragma once

#include <vector>

#include "python/src/kernel.h"

namespace tenet::python {

struct CallTimes {
  double run = 0;
  double executable = 0;
  double raw = 0;
};

CallTimes time_calls_from_cpp(const Kernel& kernel, const std::vector<Tensor>& inputs,
                              const ir::SizeBindings& given, int calls, int rounds);

}  // namespace tenet::python
