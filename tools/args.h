/// \file
/// A small command-line parser for the `tenet` subcommands: `--name value`,
/// `--name=value` (`-x value` for one-letter names), boolean flags and
/// positional arguments, with generated --help text. Unknown options are user
/// errors (UsageError), never ignored.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "support/error.h"

namespace tenet::cli {

using tenet::UsageError;

class Args {
 public:
  Args(std::string command, std::string usage, std::string summary);

  /// Declares an option taking a value (with a default shown in --help, "" for none).
  void option(const std::string& name, const std::string& meta, const std::string& help,
              const std::string& default_value = "");
  void flag(const std::string& name, const std::string& help);

  /// Parses argv after the subcommand name. Returns false when --help was given
  /// (the help text is then printed to stdout).
  bool parse(const std::vector<std::string>& argv);

  /// Whether the command declares the option (has() and get() need it to).
  bool declares(const std::string& name) const { return specs_.count(name) != 0; }
  bool has(const std::string& name) const;
  std::string get(const std::string& name) const;
  bool is_set(const std::string& name) const;  // flag given
  const std::vector<std::string>& positional() const { return positional_; }
  std::string help() const;

 private:
  struct Spec {
    std::string meta, help, default_value;
    bool is_flag;
  };
  std::string command_, usage_, summary_;
  std::vector<std::string> order_;
  std::map<std::string, Spec> specs_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

}  // namespace tenet::cli
