/// \file
/// The operators of a PyTorch extension (`tenet emit FILE --target torch`):
/// which compiled functions each one calls, and the C++ source that
/// registers them with PyTorch's dispatcher.
///
/// Expects: TorchOps whose kernels are the optimised functions of two driver
/// compilations of one program (as declared, and with every float in
/// float64), the same interface in both. Guarantees: `ops_source` is one C++
/// file that defines, for each operator `<ns>::<name>`:
///   - `<name>(Tensor x, ...) -> ...`: kernels for CPU (the generated C
///     functions, float32 or float64 by the float arguments' dtype) and Meta
///     (shapes only, with symbolic sizes), and an Autograd kernel (a
///     torch::autograd::Function) that saves the inputs and calls
///   - `<name>_backward(Tensor x, ..., Tensor? d_<output>, ...)`: the derived
///     vector-Jacobian products (CPU and Meta; no autograd of its own), for
///     the outputs whose cotangent is given;
/// every argument's dtype, rank and shape checked with a message naming it
/// (runtime/tenet_torch.h). `api_header` declares `<ns>::<name>(...)` and
/// `<ns>::<name>_backward(...)`, which call through the dispatcher, for C++
/// programs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tenet::extension {

/// One dtype's generated functions of an operator.
struct OpKernels {
  const ir::Function* forward = nullptr;
  /// The vector-Jacobian programs, by the float outputs they take a
  /// cotangent for (bit i: the i-th float output). The full set is always
  /// there; smaller sets only when the operator has few float outputs
  /// (kMostPartialOutputs): a missing cotangent then runs the full program
  /// with zeros.
  std::map<unsigned, const ir::Function*> backward;
};

/// Up to this many float outputs, each set of them gets its own backward
/// program: an output the loss does not use then takes no part in the
/// gradient, as in PyTorch (0 * an infinite derivative would be NaN).
inline constexpr int kMostPartialOutputs = 3;

struct TorchOp {
  std::string name;    // the operator's name in its namespace
  std::string origin;  // the def it comes from, for comments
  OpKernels f32;       // the function as declared
  OpKernels f64;       // every float in float64
  /// Size parameters no input's shape determines, fixed when emitting.
  std::map<std::string, int64_t> fixed_sizes;
};

/// The C symbols of the functions `ops_source` calls are declared by these
/// headers (the two units' .h files).
std::string ops_source(const std::string& ns, const std::vector<TorchOp>& ops,
                       const std::vector<std::string>& kernel_headers,
                       const std::string& api_header_name, const std::string& origin);
std::string api_header(const std::string& ns, const std::vector<TorchOp>& ops,
                       const std::string& origin);

}  // namespace tenet::extension
