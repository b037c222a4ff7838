/// \file
/// Helpers shared by the C++ backend tests: compiling .tn source, JIT options
/// for tests, and comparing compiled results with the interpreter.
#pragma once

#include <cstdint>
#include <string>

#include "ir/ir.h"
#include "jit/jit.h"
#include "support/tensor.h"

namespace tenet::codegen::testing {

/// parse + check; a CompileError fails the test with its diagnostics.
ir::Module compile_tn(const std::string& source);

/// Default JIT options with the cache in $TENET_CACHE_DIR (set by CTest) or
/// in the build folder.
jit::JitOptions test_jit_options();

/// A fresh, empty folder under the build folder's tmp/ (removed first if it exists).
std::string fresh_folder(const std::string& name);

/// Expects equal types and shapes, equal integers, and floats within `tolerance`
/// of the expected value relative to max(|expected|, 1): inputs are O(1), so
/// near-zero outputs of long reductions are judged by their absolute error.
/// A failure prints the first differing values and the largest difference.
void expect_close(const Tensor& actual, const Tensor& expected, double tolerance,
                  const std::string& what);

/// Runs `f` compiled and interpreted on the same random inputs (seeded) and
/// expects every output to match. Integer inputs are drawn in [0, int_hi).
void expect_matches_interpreter(const jit::CompiledFunction& f, const ir::SizeBindings& sizes,
                                uint64_t seed, double tolerance = 1e-5, int64_t int_hi = 10);

}  // namespace tenet::codegen::testing
