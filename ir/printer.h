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

}  // namespace tenet::ir
