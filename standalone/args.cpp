// Command-line options of the standalone programs (args.h).
#include "standalone/args.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "support/error.h"

namespace tenet::standalone {

Args::Args(std::string usage, std::vector<std::pair<std::string, std::string>> defaults)
    : usage_(std::move(usage)), values_(defaults.begin(), defaults.end()) {}

bool Args::parse(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage_.c_str(), stdout);
      return false;
    }
    if (arg.rfind("--", 0) != 0) throw BindError("unexpected argument '" + arg + "'\n" + usage_);
    std::string name = arg.substr(2), value;
    const size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      throw BindError("--" + name + " needs a value");
    }
    auto it = values_.find(name);
    if (it == values_.end()) throw BindError("unknown option --" + name + "\n" + usage_);
    it->second = value;
  }
  return true;
}

const std::string& Args::text(const std::string& name) const {
  return values_.at(name);
}

int64_t Args::integer(const std::string& name, int64_t min) const {
  const std::string& s = text(name);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE || v < min)
    throw BindError("--" + name + " must be an integer of at least " + std::to_string(min) +
                    ", not '" + s + "'");
  return v;
}

double Args::number(const std::string& name) const {
  const std::string& s = text(name);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v))
    throw BindError("--" + name + " must be a number, not '" + s + "'");
  return v;
}

bool Args::boolean(const std::string& name) const {
  const std::string& s = text(name);
  if (s == "true") return true;
  if (s == "false") return false;
  throw BindError("--" + name + " must be true or false, not '" + s + "'");
}

}  // namespace tenet::standalone
