/// \file
/// Helpers for the tests of contractions lowered to GEMM calls: run a
/// function through the pass pipeline and the JIT, and compare it with the
/// interpreter on the function as the checker (or AD) made it.
#pragma once

#include <cstdint>
#include <string>

#include "ir/ir.h"
#include "jit/jit.h"

namespace tenet::codegen::testing {

/// The vector-Jacobian product program of `fn` in `source`, alone in a module.
ir::Module gradient_of_source(const std::string& source, const std::string& fn);

/// The statements of `fn` (loop bodies included) that the pipeline gave a GEMM
/// or a convolution plan, as "result: plan" lines.
std::string lowered_statements(const ir::Function& fn);

/// Runs the pipeline on a copy of `m`, EXPECTs function `name` to have exactly
/// `expected_lowered` lowered statements, compiles it, and EXPECTs every output
/// to match the interpreter run of `m`'s (unoptimised) function on the same
/// random inputs.
///
/// Tolerance: a GEMM sums the K products in its own order (blocked, vectorised,
/// fused multiply-adds), the interpreter sequentially, both in float32. With
/// inputs uniform in [-1, 1) an output is about sqrt(K)/3 in size and each
/// order's rounding error is about u * sqrt(K) times that (u = 6e-8, random
/// signs), so max |compiled - interpreter| <= 1e-5 * sqrt(K) * max |interpreter|
/// per output leaves a margin of a few hundred while still catching a wrong
/// index, a missing term or a transposition (errors of order 1 relative).
/// K is the longest reduction in the function.
/// Returns the generated source, for further checks.
std::string expect_gemm_matches_interpreter(const ir::Module& m, const std::string& name,
                                            const ir::SizeBindings& sizes, int expected_lowered,
                                            uint64_t seed = 7,
                                            const jit::JitOptions* options = nullptr);

}  // namespace tenet::codegen::testing
