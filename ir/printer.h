/// \file
/// The IR's stable text form (docs/ir.md). print() output parses back with
/// parse_ir() (ir_parser.h) into an identical module.
#pragma once

#include <string>

#include "ir/ir.h"

namespace tenet::ir {

std::string print(const Function& fn);
std::string print(const Module& m);
std::string print(const Expr& e);

/// A read as the language writes it, for messages and comments (not the IR
/// text form): "x(b, c, 2*i + ki)", "x?(h - 1)" when guarded.
std::string read_text(const ExprNode& read);
/// An int64 index expression as the language writes it: "I(i, k) + kh",
/// "i % 4" (casts between integer types left out).
std::string index_text(const Expr& e);

}  // namespace tenet::ir
