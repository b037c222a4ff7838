/// \file
/// The gradient side of the `tenet` command line: `print --grad FN`,
/// `run --grad` and `gradcheck`. A gradient program is one driver request
/// (driver/driver.h): the chosen function differentiated, then optimised by
/// the same passes as any function, so the interpreter, the C++ backend and
/// the printed source all see one program.
#pragma once

#include <string>
#include <vector>

#include "tools/args.h"

namespace tenet::cli {

/// Declares --wrt, --output and --vjp.
void add_grad_request_options(Args& a);

/// `print FILE --grad FN`: the gradient program as source, IR or C++.
int print_gradient(const Args& a);

/// `run FILE --grad`: forward and backward, every output and gradient summarised.
int run_gradient(const Args& a);

int cmd_gradcheck(const std::vector<std::string>& args);

}  // namespace tenet::cli
