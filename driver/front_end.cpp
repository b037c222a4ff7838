// The front end callers run first (front_end.h).
#include "driver/front_end.h"

namespace tenet::driver {

Compilation front_end(Request request) {
  request.stop_after = stage::kCheck;
  return compile(request);
}

}  // namespace tenet::driver
