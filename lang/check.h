/// \file
/// The checker: resolves names, types, ranks and index ranges of an
/// ast::File and lowers it to IR (calls inlined, `+=` made explicit, loops
/// with their carried tensors).
///
/// Expects: a parsed program. Guarantees: a verified ir::Module with one
/// Function per `def`, or a CompileError whose text holds every diagnostic
/// found (each "file:line:col: error: ..." with source line, caret and notes).
#pragma once

#include "ir/ir.h"
#include "lang/ast.h"
#include "support/diagnostics.h"

namespace tenet::lang {

ir::Module check(const ast::File& program, const SourceFile& file);

/// One warning per TC reduction hint `<=> ...` of the program, which the
/// checker accepts and ignores, rendered ("file:line:col: warning: ..."),
/// separated by newlines; "" when there is none. `tenet check` prints them.
std::string ignored_annotations(const ast::File& program, const SourceFile& file);

/// parse + check: the front end in one call.
ir::Module compile_source(const SourceFile& file);

}  // namespace tenet::lang
