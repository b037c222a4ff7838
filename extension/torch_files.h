/// \file
/// The CMakeLists.txt and README.md of a PyTorch extension project
/// (torch_project.h). Internal to extension/.
#pragma once

#include <string>
#include <vector>

#include "extension/torch_ops.h"
#include "extension/torch_project.h"

namespace tenet::extension {

/// Builds lib<ns>.so from the operator source and the kernels, against the
/// PyTorch that `find_package(Torch)` finds, with the kernels compiled as
/// Tenet's JIT compiles them (and a BLAS/oneDNN where they call tenet::gemm).
std::string torch_cmake_lists(const TorchProject& project, const std::string& origin);
std::string torch_readme(const TorchProject& project, const std::vector<TorchOp>& ops,
                         const std::string& origin);

}  // namespace tenet::extension
