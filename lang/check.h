/// \file
/// The checker: resolves names, types, ranks and index ranges of an
/// ast::File and lowers it to IR (calls inlined, `+=` made explicit, loops
/// with their carried tensors).
///
/// Expects: a parsed program. Guarantees: a verified ir::Module with one
/// Function per `def` and the warnings and notes of the program, or a
/// CompileError whose text holds every error found (each "file:line:col:
/// error: ..." with source line, caret and notes).
#pragma once

#include "ir/ir.h"
#include "lang/ast.h"
#include "support/diagnostics.h"

namespace tenet::lang {

/// What the checker makes of a program without errors.
struct Checked {
  ir::Module module;
  /// Warnings and notes about the program, in source order (each function's
  /// once, not again where calls inline it): a TC reduction hint `<=> ...`
  /// that is ignored, an index that takes the smaller of its uses' ranges.
  std::vector<Diagnostic> warnings;
};

Checked check(const ast::File& program, const SourceFile& file);

/// parse + check: the front end in one call (its warnings dropped).
ir::Module compile_source(const SourceFile& file);

}  // namespace tenet::lang
