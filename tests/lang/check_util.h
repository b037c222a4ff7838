/// \file
/// Helpers for the checker tests: compile source text, or compile it
/// expecting a CompileError and get its rendered text.
#pragma once

#include <string>

#include "ir/ir.h"

namespace tenet::testing {

/// compile_source on `text` (reported as file `path`); fails the test on a
/// CompileError and returns an empty module.
ir::Module check_ok(const std::string& text, const std::string& path = "test.tn");
/// The CompileError text of compiling `text`; fails the test if it compiles.
std::string check_error(const std::string& text, const std::string& path = "test.tn");
/// ir::print of the function `name` after compiling `text`.
std::string check_print(const std::string& text, const std::string& name);

}  // namespace tenet::testing
