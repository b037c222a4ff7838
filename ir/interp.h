/// \file
/// The reference interpreter: executes any verified Function, statement by
/// statement, straight from the IR. It is the oracle for compiled code and for
/// automatic differentiation, so it favours obvious correctness over speed.
#pragma once

#include <optional>
#include <vector>

#include "ir/ir.h"
#include "support/tensor.h"

namespace tenet::ir {

struct InterpOptions {
  /// Run all floating-point math and produce float outputs in this type
  /// (F32 or F64), whatever the declared types; nullopt keeps declared types.
  std::optional<ElemType> float_type;
};

/// Binds sizes (bind.h), runs, and returns one tensor per output.
/// Throws BindError for bad inputs.
std::vector<Tensor> interpret(const Function& fn, const std::vector<Tensor>& inputs,
                              const SizeBindings& given_sizes = {}, InterpOptions options = {});

}  // namespace tenet::ir
