#include "tools/args.h"

#include <iostream>
#include <sstream>

namespace tenet::cli {

Args::Args(std::string command, std::string usage, std::string summary)
    : command_(std::move(command)), usage_(std::move(usage)), summary_(std::move(summary)) {}

void Args::option(const std::string& name, const std::string& meta, const std::string& help,
                  const std::string& default_value) {
  order_.push_back(name);
  specs_[name] = Spec{meta, help, default_value, false};
}

void Args::flag(const std::string& name, const std::string& help) {
  order_.push_back(name);
  specs_[name] = Spec{"", help, "", true};
}

bool Args::parse(const std::vector<std::string>& argv) {
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string a = argv[i];
    // Single-letter options may be written with one dash: -o DIR.
    if (a.size() == 2 && a[0] == '-' && a[1] != '-' && specs_.count(a.substr(1))) a = "-" + a;
    if (a == "--help" || a == "-h") {
      std::cout << help();
      return false;
    }
    if (a.size() > 2 && a.rfind("--", 0) == 0) {
      std::string name = a.substr(2), value;
      bool inline_value = false;
      if (auto eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        inline_value = true;
      }
      auto it = specs_.find(name);
      if (it == specs_.end())
        throw UsageError("unknown option '--" + name + "' for 'tenet " + command_ +
                         "' (see tenet " + command_ + " --help)");
      if (it->second.is_flag) {
        if (inline_value) throw UsageError("option '--" + name + "' takes no value");
        values_[name] = "1";
      } else {
        if (!inline_value) {
          if (i + 1 >= argv.size()) throw UsageError("option '--" + name + "' needs a value");
          value = argv[++i];
        }
        values_[name] = value;
      }
      continue;
    }
    positional_.push_back(a);
  }
  return true;
}

bool Args::has(const std::string& name) const {
  return values_.count(name) || !specs_.at(name).default_value.empty();
}

std::string Args::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it != values_.end()) return it->second;
  return specs_.at(name).default_value;
}

bool Args::is_set(const std::string& name) const {
  return values_.count(name) > 0;
}

std::string Args::help() const {
  std::ostringstream os;
  os << "usage: tenet " << command_ << " " << usage_ << "\n\n" << summary_ << "\n";
  if (!order_.empty()) os << "\noptions:\n";
  for (const auto& name : order_) {
    const Spec& s = specs_.at(name);
    std::string left = "  --" + name + (s.is_flag ? "" : " " + s.meta);
    os << left;
    if (left.size() < 28)
      os << std::string(28 - left.size(), ' ');
    else
      os << "\n" << std::string(28, ' ');
    os << s.help;
    if (!s.default_value.empty()) os << " (default: " << s.default_value << ")";
    os << "\n";
  }
  os << "  --help                    show this help\n";
  return os.str();
}

}  // namespace tenet::cli
