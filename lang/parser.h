/// \file
/// Lexer and parser: source text to ast::File (grammar in ast.h).
/// Syntax errors are CompileError with the rendered diagnostic
/// ("file:line:col: error: expected ')' ..." plus source line and caret).
#pragma once

#include "lang/ast.h"
#include "support/diagnostics.h"

namespace tenet::lang {

/// Parses a whole file. Stops at the first syntax error (throws CompileError).
/// Never crashes or hangs on malformed input (fuzzed in CI).
ast::File parse(const SourceFile& file);

}  // namespace tenet::lang
