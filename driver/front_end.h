/// \file
/// What callers of the driver name before they compile: the stages they stop
/// after, as constants (the table in driver.cpp names those stages with the
/// same constants, so a renamed stage cannot leave a caller behind), the
/// front end every caller runs first, and the function a caller means when it
/// names none (the CLI's `--fn`, Python's `entry`: one rule for both).
///
/// Expects: a Request naming source text or a file. Guarantees: front_end()
/// runs `parse` and `check` only, whatever the request's stop_after; what it
/// returns continues with compile(request, front).
#pragma once

#include "driver/driver.h"

namespace tenet::driver {

/// The stages callers stop after (Request::stop_after) or compare with.
namespace stage {
inline constexpr char kParse[] = "parse";
inline constexpr char kCheck[] = "check";
inline constexpr char kRetype[] = "retype";
inline constexpr char kAd[] = "ad";
inline constexpr char kSplit[] = "split";
}  // namespace stage

/// The front end of `request`: its file parsed and checked (the checked
/// module, the checker's warnings), for a caller that chooses functions or
/// reads directives before it continues with compile(request, front).
Compilation front_end(Request request);

/// The entry function of a checked file (`front`, as front_end() made it)
/// when the caller names none: the one def that no other def calls (a file
/// of helpers and one model needs no name; a file of one def is its own
/// entry). A UsageError when there is none ("f.tn defines no function") or
/// there are several ("f.tn has several entry functions (a, b): name one
/// with <how_to_name>", e.g. "--fn NAME").
const ir::Function& default_entry(const Compilation& front, const std::string& how_to_name);

}  // namespace tenet::driver
