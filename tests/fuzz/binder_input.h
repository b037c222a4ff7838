/// \file
/// The binder fuzz target's work on one input (fuzz_binder.cpp documents the
/// input's format), shared with the replay of tests/fuzz/regressions/binder/
/// in test_codegen, so that a saved input is replayed exactly as found.
#pragma once

#include <string>

namespace tenet::fuzz {

/// Compiles the program, binds each function at the sizes and shapes the
/// input gives, interprets it when that is cheap, and emits its C++. Returns
/// normally on success or a user error (CompileError, BindError); anything
/// else escapes (an InternalError, a std::exception) and is a finding.
void run_binder_input(const std::string& input);

}  // namespace tenet::fuzz
