/// \file
/// Parses the IR text form written by printer.h. Errors are CompileError with
/// file:line:col diagnostics; the result is verified.
#pragma once

#include "ir/ir.h"
#include "support/diagnostics.h"

namespace tenet::ir {

Module parse_ir(const SourceFile& file);

}  // namespace tenet::ir
