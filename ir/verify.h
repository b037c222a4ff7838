/// \file
/// The IR verifier: checks the invariants listed in ir.h. Run by
/// FunctionBuilder::finish() and by the pass pipeline after every pass, so a
/// bad transformation is reported as an IR error naming the pass, never as a
/// C++ compiler error later.
#pragma once

#include <string>

#include "ir/ir.h"

namespace tenet::ir {

/// Throws InternalError("IR verifier failed after <context>: <problem> in ...")
/// on the first broken invariant.
void verify(const Function& fn, const std::string& context);
void verify(const Module& m, const std::string& context);

}  // namespace tenet::ir
