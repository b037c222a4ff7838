/// \file
/// Helpers for pass tests: read an IR file from tests/passes, and check with
/// the interpreter that a pass left every output bit for bit unchanged.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace tenet::ir::testing {

/// The statement defining `name` in `body` or a loop inside it, or null.
const Stmt* find_statement(const std::vector<Stmt>& body, const std::string& name);

/// Parses tests/passes/<name>.
Module read_ir(const std::string& name);

/// Runs both functions on the same random inputs (with -0.0, infinities and
/// NaN planted in float inputs), with declared types and with all floats in
/// float64, and EXPECTs identical outputs (NaN matches NaN). Every size
/// parameter is bound to `size`.
void expect_same_outputs(const Function& before, const Function& after, int64_t size = 7);
/// The same with each size parameter bound as given. With `float32_tolerance`,
/// finite float32 outputs (declared types) may differ by that much relative
/// to the output's largest magnitude; float64 mode stays bitwise.
void expect_same_outputs(const Function& before, const Function& after, const SizeBindings& sizes,
                         double float32_tolerance = 0);

}  // namespace tenet::ir::testing
