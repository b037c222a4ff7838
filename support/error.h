/// \file
/// Internal errors: a broken compiler invariant, never a user mistake.
///
/// User mistakes in programs are CompileError (diagnostics.h); user mistakes at
/// a binding (a wrong shape passed at run time) are BindError; in a request
/// (an option, a stage name) UsageError. All carry text meant for the user. TENET_ASSERT failures
/// say "internal error" and where.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace tenet {

class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& what) : std::logic_error(what) {}
};

/// A run-time user error that is not tied to a source location: a wrong
/// input shape or type, an unknown size parameter, an unreadable input file.
class BindError : public std::runtime_error {
 public:
  explicit BindError(const std::string& what) : std::runtime_error(what) {}
};

/// A request the user made wrongly, outside any program text: a bad
/// command-line option, an unknown stage or pass name.
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& what) : std::runtime_error(what) {}
};

[[noreturn]] void internal_error(const char* file, int line, const std::string& msg);

}  // namespace tenet

#define TENET_ASSERT(cond, msg)                                            \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::ostringstream tenet_assert_os_;                                 \
      tenet_assert_os_ << "assertion '" #cond "' failed: " << msg;         \
      ::tenet::internal_error(__FILE__, __LINE__, tenet_assert_os_.str()); \
    }                                                                      \
  } while (0)

#define TENET_UNREACHABLE(msg) ::tenet::internal_error(__FILE__, __LINE__, msg)
