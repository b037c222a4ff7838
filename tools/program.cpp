// Loading, choosing and parsing for the subcommands (program.h).
#include "tools/program.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <ostream>
#include <set>
#include <sstream>

#include "driver/front_end.h"
#include "support/error.h"

namespace tenet::cli {

std::string require_file(const Args& a) {
  if (a.positional().size() != 1) throw UsageError("expected one FILE argument (see --help)");
  return a.positional()[0];
}

driver::Request request(const std::string& path, const std::string& dump_after,
                        const std::string& target) {
  driver::Request r;
  r.path = path;
  r.target = driver::find_target(target).name;
  for (const std::string& stage : parse_list(dump_after)) r.dump_after.insert(stage);
  return r;
}

driver::Compilation front_end(const std::string& path, const std::string& dump_after,
                              const std::string& target) {
  driver::Compilation c = driver::front_end(request(path, dump_after, target));
  print_warnings(c);
  return c;
}

driver::Compilation compile_after(const driver::Compilation& front,
                                  const driver::Request& request) {
  driver::Compilation c = driver::compile(request, front);
  print_warnings(c);
  return c;
}

void print_warnings(const driver::Compilation& c) {
  if (std::string text = c.render_warnings(); !text.empty()) std::cerr << text << "\n";
}

const ir::Function& select_function(const driver::Compilation& front, const std::string& name) {
  if (name.empty()) return driver::default_entry(front, "--fn NAME");
  if (const ir::Function* f = front.checked->find(name)) return *f;
  std::string names;
  for (const auto& f : front.checked->functions) names += (names.empty() ? "" : ", ") + f.name;
  throw UsageError("no function '" + name + "' in " + front.file->path() + " (functions: " + names +
                   ")");
}

std::vector<std::string> chosen_functions(const driver::Compilation& front,
                                          const std::string& name) {
  if (!name.empty()) return {select_function(front, name).name};
  if (front.checked->functions.empty())
    throw UsageError(front.file->path() + " defines no function");
  std::vector<std::string> names;
  for (const auto& f : front.checked->functions) names.push_back(f.name);
  return names;
}

ir::SizeBindings parse_sizes(const std::string& spec, const std::string& option) {
  ir::SizeBindings sizes;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError(option + " expects NAME=VALUE[,NAME=VALUE...], got '" + item + "'");
    std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || v < 0 ||
        !std::isdigit(static_cast<unsigned char>(value[0])))
      throw UsageError(option + ": '" + value + "' is not a non-negative integer (for " + name +
                       ")");
    if (errno == ERANGE)
      throw UsageError(option + ": " + name + "=" + value + " is too large (at most 2^63 - 1)");
    if (!sizes.emplace(name, v).second) throw UsageError(option + ": " + name + " is given twice");
  }
  return sizes;
}

uint64_t parse_seed(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  unsigned long long seed = std::strtoull(text.c_str(), &end, 10);
  // strtoull would take "-1" as 2^64 - 1 and " 7" as 7.
  if (text.empty() || *end != '\0' || !std::isdigit(static_cast<unsigned char>(text[0])))
    throw UsageError("--seed expects an integer");
  if (errno == ERANGE) throw UsageError("--seed: " + text + " is too large (at most 2^64 - 1)");
  return seed;
}

std::vector<std::string> parse_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

void require_sizes(const ir::Function& fn, const ir::SizeBindings& given, bool inputs_option) {
  for (const auto& in : fn.inputs)
    for (const auto& d : in->shape)
      for (const auto& sym : d.symbols())
        if (!given.count(sym))
          throw UsageError("size parameter '" + sym + "' of input '" + in->name +
                           "' is not bound; give it with --sizes " + sym + "=..." +
                           (inputs_option ? " (or pass --inputs DIR)" : ""));
}

void add_common_options(Args& a) {
  a.option("dump-after", "STAGE[,STAGE]|all",
           "print what the named stages made to stderr (also TENET_DUMP_AFTER); stages: " +
               driver::stage_names());
}

void add_target_option(Args& a) {
  a.option("target", "NAME", "the code target: " + driver::target_names(), driver::kDefaultTarget);
}

void add_static_sizes_option(Args& a) {
  a.option("static-sizes", "N=V,...",
           "compile these size parameters in as constants (the cost rules, loops and library "
           "calls see the numbers; inputs must then have those sizes)");
}

ir::SizeBindings static_sizes(const Args& a) {
  if (!a.declares("static-sizes")) return {};
  return parse_sizes(a.get("static-sizes"), "--static-sizes");
}

void add_backend_option(Args& a) {
  a.option("backend", "NAME",
           "interp (the reference interpreter) or a code target: " + driver::target_names(),
           "interp");
}

std::string code_target(const Args& a) {
  if (a.declares("backend") && a.get("backend") != "interp") {
    driver::find_target(a.get("backend"));  // an unknown name lists the targets
    return a.get("backend");
  }
  if (a.declares("target") && a.is_set("target")) return a.get("target");
  return driver::kDefaultTarget;
}

void prepare_save_folder(const Args& a) {
  if (!a.is_set("save")) return;
  const std::string dir = a.get("save");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw UsageError("--save: cannot create the folder '" + dir +
                     "': " + (ec ? ec.message() : "it is not a folder"));
}

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void print_tensor_summary(std::ostream& os, const std::string& label, const std::string& name,
                          const Tensor& t) {
  double sum = 0, sum_sq = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = t.get(i);
    sum += v;
    sum_sq += v * v;
  }
  os << label << " " << name << ": " << t.describe() << "\n";
  os << "  checksum: " << fmt(sum) << " " << fmt(sum_sq) << "\n";
  os << "  values:";
  int64_t shown = std::min<int64_t>(t.numel(), 8);
  for (int64_t i = 0; i < shown; ++i) os << " " << fmt(t.get(i));
  if (t.numel() > shown) os << " ...";
  os << "\n";
}

}  // namespace tenet::cli
