/// \file
/// Reverse-mode automatic differentiation, as an IR-to-IR pass.
///
/// Expects: a Function as the checker produces it (calls already inlined, so
/// there are no per-function adjoints to write); it is verified first.
/// Guarantees: an ordinary, verified Function named `<name>_grad` made only of
/// Compute statements (loops are unrolled, see ad/README.md), with
///   inputs:  the original inputs, then in vector-Jacobian mode one cotangent
///            `d_<output>` per differentiated output (same type and shape);
///   outputs: the original outputs, then one gradient `d_<input>` per
///            differentiated input (same type and shape), in request order,
///            each marked with its input (ir::Function::gradient_of: the
///            name is another when `d_<input>` is taken).
/// It knows nothing of memory or code generation. Backward statements carry
/// the forward statement's source ("backward: ...") and an `ad` attribute
/// saying what they are ("gather for x(b, c, 2*i + ki, 2*j + kj)", "argmax",
/// "unrolled it=1", ...). No statement is a scatter: every adjoint is a
/// Compute over the adjoint's own domain (gather.h), so any parallelisation
/// over out indices is race-free and the sums are deterministic.
///
/// Errors in the request (unknown function, output or input; an integer
/// input or output; a name given twice; a non-scalar output without
/// cotangents) are CompileErrors: with a
/// SourceFile, `file:line:col: error: ...` at the function's or value's span,
/// with the source line and a caret; without one, `error: ...`.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/diagnostics.h"

namespace tenet::ad {

/// Which part of a vector-Jacobian program a request wants (ad/split.h).
enum class VjpHalf {
  Both,      // the whole program: the forward, then the backward from the inputs
  Forward,   // the forward half, returning what the backward half reads too
  Backward,  // the backward half, taking those values instead of recomputing them
};

struct GradRequest {
  /// Inputs to differentiate with respect to; empty means every float input.
  std::vector<std::string> wrt;
  /// The output to differentiate. Without `vjp` it must be a float scalar and
  /// is seeded with 1; empty means the function's only output, or among
  /// several the only float scalar (a model's loss beside its predictions).
  /// With `vjp`, empty means every float output. (This is the one place the
  /// default is decided: the CLI, Python and the trainer leave it empty.)
  std::string output;
  /// Vector-Jacobian products: take a cotangent input `d_<output>` for each
  /// differentiated output instead of requiring a scalar.
  bool vjp = false;
  /// With `vjp`, the outputs to differentiate (each a float output, named
  /// once), taken in the function's order whatever the order here; empty
  /// means `output` decides. Without `vjp`, at most one (as `output`). Not
  /// both this and `output`. (PyTorch's autograd differentiates only the
  /// outputs that received a gradient.)
  std::vector<std::string> outputs = {};
  /// With `vjp`, one half of the program (ad/split.h): the driver cuts the
  /// optimised program (after the shared passes, so that `fuse` has decided
  /// what the backward recomputes) and keeps this half.
  VjpHalf half = VjpHalf::Both;
};

/// The inputs a request differentiates, in order (validated as differentiate does).
std::vector<std::string> resolve_wrt(const ir::Function& fn, const GradRequest& req,
                                     const SourceFile* file = nullptr);
/// The outputs a request differentiates (those that get a seed or a cotangent).
std::vector<std::string> resolve_outputs(const ir::Function& fn, const GradRequest& req,
                                         const SourceFile* file = nullptr);

ir::Function differentiate(const ir::Function& fn, const GradRequest& req,
                           const SourceFile* file = nullptr);
/// Looks the function up by name first ("no function named ..." otherwise).
ir::Function differentiate(const ir::Module& m, const std::string& function, const GradRequest& req,
                           const SourceFile* file = nullptr);

}  // namespace tenet::ad
