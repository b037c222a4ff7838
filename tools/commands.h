/// \file
/// The `tenet` subcommands (check, print, run, emit, opt). Each takes the arguments after its name
/// and returns the process exit status; user errors are thrown (CompileError, BindError,
/// UsageError) and reported by main(). The gradient commands
/// (`print --grad`, `run --grad`, `gradcheck`) are in grad_commands.h.
#pragma once

#include <string>
#include <vector>

namespace tenet::cli {

int cmd_check(const std::vector<std::string>& args);
int cmd_print(const std::vector<std::string>& args);
int cmd_run(const std::vector<std::string>& args);
int cmd_emit(const std::vector<std::string>& args);
/// `tenet opt FILE.ir --passes=a,b,c`: named passes on printed IR.
int cmd_opt(const std::vector<std::string>& args);

}  // namespace tenet::cli
