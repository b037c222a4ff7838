/// \file
/// How the C++ backend prints a statement lowered to GEMM calls
/// (lower/gemm.h): the packs and other statements around the calls as loop
/// nests and the calls' loops (all from the loop tree, lower/loops.h), each
/// call as tenet::gemm (runtime/tenet_gemm.h), chunks as a loop over views.
///
/// Internal to codegen/.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen/c_text.h"
#include "ir/ir.h"
#include "lower/lowered.h"

namespace tenet::codegen::detail {

/// The product of the extents of `dims` as C++, constants folded ("C * 81").
std::string product_text(const std::vector<ir::Dim>& dims, const NameMap& size_names);

}  // namespace tenet::codegen::detail
