// The known targets (target.h).
#include "driver/target.h"

#include "support/error.h"

namespace tenet::driver {

std::vector<const lower::LoweredFunction*> lowered_functions(const Compilation& c) {
  std::vector<const lower::LoweredFunction*> functions;
  for (const lower::LoweredFunction& f : c.lowered->functions) functions.push_back(&f);
  return functions;
}

const std::vector<const Target*>& targets() {
  static const std::vector<const Target*> all = {&cpp_target(), &cuda_emulated_target(),
                                                 &cuda_target()};
  return all;
}

std::string target_names() {
  std::string out;
  for (const Target* t : targets()) out += (out.empty() ? "" : ", ") + std::string(t->name);
  return out;
}

const Target& find_target(const std::string& name) {
  for (const Target* t : targets())
    if (name == t->name) return *t;
  throw UsageError("unknown target '" + name + "' (targets: " + target_names() + ")");
}

}  // namespace tenet::driver
