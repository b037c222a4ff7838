/// \file
/// What callers of the driver name before they compile: the stages they stop
/// after, as constants (the table in driver.cpp names those stages with the
/// same constants, so a renamed stage cannot leave a caller behind), and the
/// front end every caller runs first.
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
}  // namespace stage

/// The front end of `request`: its file parsed and checked (the checked
/// module, the checker's warnings), for a caller that chooses functions or
/// reads directives before it continues with compile(request, front).
Compilation front_end(Request request);

}  // namespace tenet::driver
