#include "support/error.h"

namespace tenet {

void internal_error(const char* file, int line, const std::string& msg) {
  throw InternalError("internal error: " + msg + " (at " + file + ":" + std::to_string(line) + ")");
}

}  // namespace tenet
