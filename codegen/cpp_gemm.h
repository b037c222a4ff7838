/// \file
/// How the C++ backend prints a statement lowered to GEMM calls
/// (lower/gemm.h): the packs and other statements around the calls as loop
/// nests, the calls as tenet::gemm (runtime/tenet_gemm.h), the gather of a
/// split statement as a scatter of windows (gemm_col2im.cpp), chunks as a
/// loop over views.
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

/// A loop of GEMMs runs them one per thread (the library single-threaded
/// inside the parallel region) when each does fewer multiply-adds than this;
/// larger ones run one after another, each threaded by the library.
constexpr int64_t kThreadedGemmWork = int64_t(1) << 22;

/// The product of the extents of `dims` as C++, constants folded ("C * 81").
std::string product_text(const std::vector<ir::Dim>& dims, const NameMap& size_names);

}  // namespace tenet::codegen::detail
