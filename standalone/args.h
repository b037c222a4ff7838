/// \file
/// The command-line options of a standalone project's programs: `--name
/// VALUE` or `--name=VALUE` for the options given with their defaults, and
/// --help. Values are checked when read: a number must be all number, an
/// integer within its range. Errors are BindErrors naming the option.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tenet::standalone {

class Args {
 public:
  Args(std::string usage, std::vector<std::pair<std::string, std::string>> defaults);
  /// False after printing the usage for --help.
  bool parse(int argc, char** argv);

  const std::string& text(const std::string& name) const;
  /// An integer of at least `min`.
  int64_t integer(const std::string& name, int64_t min) const;
  /// A finite number.
  double number(const std::string& name) const;
  /// true or false.
  bool boolean(const std::string& name) const;

 private:
  std::string usage_;
  std::map<std::string, std::string> values_;
};

}  // namespace tenet::standalone
