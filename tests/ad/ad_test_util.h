/// \file
/// Helpers for the AD tests: compile a source snippet, differentiate, print,
/// and gradcheck with a readable failure message.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ad/grad.h"
#include "ad/gradcheck.h"
#include "ir/ir.h"
#include "support/tensor.h"

namespace tenet::ad::testing {

/// Compiles `source` (one or more defs) and returns the function `name`.
ir::Function compile_fn(const std::string& source, const std::string& name);

/// The printed IR of the gradient of `name` in `source`.
std::string grad_ir(const std::string& source, const std::string& name,
                    const GradRequest& req = {});

/// Gradchecks `name` in `source`; EXPECTs it to pass and prints the table on failure.
GradcheckReport expect_gradcheck(const std::string& source, const std::string& name,
                                 const GradcheckOptions& options);

/// A float32 tensor of `shape` holding `values` (row-major).
Tensor tensor(std::vector<int64_t> shape, std::vector<double> values);
/// Every element of `t`, in order.
std::vector<double> values(const Tensor& t);

}  // namespace tenet::ad::testing
