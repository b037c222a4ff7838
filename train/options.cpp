// The table of training options and the typed hyper-parameters made from it
// (options.h).
#include "train/options.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace tenet::train {

namespace {

constexpr uint64_t kInt64Max = uint64_t(std::numeric_limits<int64_t>::max());
constexpr uint64_t kUint64Max = std::numeric_limits<uint64_t>::max();
constexpr double kInfinity = std::numeric_limits<double>::infinity();

TrainingOption choice(std::string name, std::vector<std::string> choices, std::string help) {
  TrainingOption o;
  o.name = std::move(name);
  o.type = OptionType::Choice;
  o.choices = std::move(choices);
  o.help = std::move(help);
  return o;
}

TrainingOption boolean(std::string name, std::string help) {
  TrainingOption o;
  o.name = std::move(name);
  o.type = OptionType::Bool;
  o.default_value = "false";
  o.help = std::move(help);
  return o;
}

TrainingOption integer(std::string name, uint64_t lo, uint64_t hi, std::string default_value,
                       std::string help) {
  TrainingOption o;
  o.name = std::move(name);
  o.type = OptionType::Integer;
  o.int_min = lo;
  o.int_max = hi;
  o.default_value = std::move(default_value);
  o.help = std::move(help);
  return o;
}

/// A number in lo..hi: `ends` is "[]", "(]", "[)" or "()".
TrainingOption number(std::string name, double lo, double hi, const char* ends,
                      std::string default_value, std::string help) {
  TrainingOption o;
  o.name = std::move(name);
  o.type = OptionType::Number;
  o.min = lo;
  o.max = hi;
  o.min_open = ends[0] == '(';
  o.max_open = ends[1] == ')';
  o.default_value = std::move(default_value);
  o.help = std::move(help);
  return o;
}

std::string short_number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// A decimal integer without sign or blanks that fits uint64_t.
bool parse_unsigned(const std::string& text, uint64_t& out) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  out = v;
  return *end == '\0' && errno != ERANGE;
}

/// A finite number, the whole text (strtod alone skips leading blanks).
bool parse_number(const std::string& text, double& out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return *end == '\0' && std::isfinite(out);
}

/// Whether two valid values of `o` are the same value ("0.001" and "1e-3").
bool same_value(const TrainingOption& o, const std::string& a, const std::string& b) {
  if (a == b) return true;
  if (o.type == OptionType::Number) {
    double x = 0, y = 0;
    return parse_number(a, x) && parse_number(b, y) && x == y;
  }
  if (o.type == OptionType::Integer) {
    uint64_t x = 0, y = 0;
    return parse_unsigned(a, x) && parse_unsigned(b, y) && x == y;
  }
  return false;
}

/// Typed fields from valid values of every option.
HyperParams typed(const OptionValues& v) {
  auto text = [&](const char* name) -> const std::string& { return v.at(name); };
  auto num = [&](const char* name) { return std::strtod(text(name).c_str(), nullptr); };
  auto count = [&](const char* name) {
    return int64_t(std::strtoull(text(name).c_str(), nullptr, 10));
  };
  HyperParams h;
  h.optimizer = text("optimizer");
  h.lr = num("lr");
  h.momentum = num("momentum");
  h.nesterov = text("nesterov") == "true";
  h.weight_decay = num("weight_decay");
  h.lr_decay = num("lr_decay");
  h.lr_decay_every = count("lr_decay_every");
  h.lr_decay_staircase = text("lr_decay_staircase") == "true";
  h.batch = count("batch");
  h.epochs = count("epochs");
  h.shift = count("shift");
  h.seed = std::strtoull(text("seed").c_str(), nullptr, 10);
  h.limit_train = count("limit_train");
  h.limit_test = count("limit_test");
  h.shards = count("shards");
  return h;
}

/// Doubles as text that reads back to the same value.
std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

const std::vector<TrainingOption>& training_options() {
  static const std::vector<TrainingOption> options = {
      choice("optimizer", {"adam", "sgd", "adadelta"},
             "the optimiser (torch.optim semantics; docs/training.md)"),
      number("lr", 0, kInfinity, "()", "", "learning rate (the schedule's initial rate)"),
      number("momentum", 0, 1, "[]", "0", "SGD momentum"),
      boolean("nesterov", "SGD with Nesterov momentum (needs momentum > 0)"),
      number("weight_decay", 0, kInfinity, "[)", "0",
             "L2 penalty: weight_decay x parameter added to each gradient"),
      number("lr_decay", 0, 1, "(]", "1",
             "multiply the learning rate by this every lr_decay_every steps, continuously: "
             "lr x lr_decay^(step / lr_decay_every)"),
      integer("lr_decay_every", 1, kInt64Max, "1", "steps per decay factor"),
      boolean("lr_decay_staircase",
              "decay in whole factors: lr x lr_decay^floor(step / lr_decay_every), as torch's "
              "StepLR"),
      integer("batch", 1, 1 << 20, "", "training batch size"),
      integer("epochs", 1, 1 << 20, "", "epochs to train"),
      integer("shift", 0, 27, "0",
              "augment training images with random shifts of up to this many pixels"),
      integer("seed", 0, kUint64Max, "1", "seed of initialisation, shuffling, shifts and dropout"),
      integer("limit_train", 0, kInt64Max, "0", "train on the first N training images (0: all)"),
      integer("limit_test", 0, kInt64Max, "0", "evaluate on the first N test images (0: all)"),
      integer("shards", 0, 1 << 20, "0",
              "cut each batch into this many equal parts whose gradients are added in a fixed "
              "order, shared among MPI processes; the same value gives the same bits with any "
              "number of processes dividing it (0: one per process)"),
  };
  return options;
}

const TrainingOption* find_training_option(const std::string& name) {
  for (const TrainingOption& o : training_options())
    if (o.name == name) return &o;
  return nullptr;
}

std::string training_option_names() {
  std::string names;
  for (const TrainingOption& o : training_options()) names += (names.empty() ? "" : ", ") + o.name;
  return names;
}

std::string TrainingOption::flag() const {
  std::string flag = "--" + name;
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

std::string TrainingOption::range() const {
  switch (type) {
    case OptionType::Choice: {
      std::string text;
      for (size_t i = 0; i < choices.size(); ++i)
        text += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
      return text;
    }
    case OptionType::Bool:
      return "true or false";
    case OptionType::Integer:
      if (int_max >= kInt64Max) {
        if (int_min == 0) return "a non-negative integer";
        if (int_min == 1) return "a positive integer";
        return "an integer from " + std::to_string(int_min) + " up";
      }
      return "an integer from " + std::to_string(int_min) + " to " + std::to_string(int_max);
    case OptionType::Number:
      if (std::isinf(max) && min == 0)
        return min_open ? "a positive number" : "a non-negative number";
      return std::string("a number in ") + (min_open ? "(" : "[") + short_number(min) + ", " +
             short_number(max) + (max_open ? ")" : "]");
  }
  TENET_UNREACHABLE("option type");
}

bool TrainingOption::accepts(const std::string& text) const {
  switch (type) {
    case OptionType::Choice:
      for (const std::string& c : choices)
        if (text == c) return true;
      return false;
    case OptionType::Bool:
      return text == "true" || text == "false";
    case OptionType::Integer: {
      uint64_t v = 0;
      return parse_unsigned(text, v) && v >= int_min && v <= int_max;
    }
    case OptionType::Number: {
      double v = 0;
      return parse_number(text, v) && (min_open ? v > min : v >= min) &&
             (max_open ? v < max : v <= max);
    }
  }
  return false;
}

std::string bad_value_message(const TrainingOption& option, const std::string& named,
                              const std::string& text) {
  return named + " must be " + option.range() + ", not '" + text + "'";
}

OptionValues HyperParams::to_map() const {
  return {{"optimizer", optimizer},
          {"lr", exact(lr)},
          {"momentum", exact(momentum)},
          {"nesterov", nesterov ? "true" : "false"},
          {"weight_decay", exact(weight_decay)},
          {"lr_decay", exact(lr_decay)},
          {"lr_decay_every", std::to_string(lr_decay_every)},
          {"lr_decay_staircase", lr_decay_staircase ? "true" : "false"},
          {"batch", std::to_string(batch)},
          {"epochs", std::to_string(epochs)},
          {"shift", std::to_string(shift)},
          {"seed", std::to_string(seed)},
          {"limit_train", std::to_string(limit_train)},
          {"limit_test", std::to_string(limit_test)},
          {"shards", std::to_string(shards)}};
}

HyperParams HyperParams::from_map(const OptionValues& values, const std::string& source) {
  OptionValues valid;
  for (const TrainingOption& o : training_options()) {
    auto it = values.find(o.name);
    // Checkpoints written before an option existed (lr_decay_staircase) ran
    // with its default.
    if (it == values.end() && o.default_value.empty())
      throw BindError(source + ": checkpoint metadata has no '" + o.name +
                      "': not a checkpoint of `tenet train`");
    const std::string& text = it == values.end() ? o.default_value : it->second;
    if (!o.accepts(text))
      throw BindError(source + ": malformed hyper-parameters in the checkpoint metadata: " +
                      bad_value_message(o, "'" + o.name + "'", text));
    valid[o.name] = text;
  }
  return typed(valid);
}

void check_option_values(const OptionValues& values, const OptionNamer& name) {
  for (const auto& [key, text] : values) {
    const TrainingOption* o = find_training_option(key);
    if (!o)
      throw OptionError("unknown training option '" + key +
                        "'; the options are: " + training_option_names());
    if (!o->accepts(text)) throw OptionError(bad_value_message(*o, name(*o), text));
  }
}

HyperParams resolve_hyper_params(const OptionValues& given, const OptionValues& model_defaults,
                                 const OptionNamer& name) {
  check_option_values(given, name);
  OptionValues values;
  for (const TrainingOption& o : training_options()) {
    if (auto it = given.find(o.name); it != given.end()) {
      values[o.name] = it->second;
    } else if (auto d = model_defaults.find(o.name); d != model_defaults.end()) {
      values[o.name] = d->second;  // checked at the directive
    } else if (!o.default_value.empty()) {
      values[o.name] = o.default_value;
    } else {
      throw OptionError("no " + o.name + " given: pass " + name(o) + " or add " + o.name +
                        "=... to the model's '# @defaults' line");
    }
  }
  return typed(values);
}

HyperParams resumed_hyper_params(const HyperParams& saved, const OptionValues& given,
                                 const OptionNamer& name) {
  const OptionValues kept = saved.to_map();
  OptionValues values = kept;
  check_option_values(given, name);
  for (const auto& [key, text] : given) {
    const TrainingOption& o = *find_training_option(key);
    if (key == "epochs" || key == "shards") {
      values[key] = text;  // train longer (or stop sooner); share the batch otherwise
    } else if (!same_value(o, text, kept.at(key))) {
      throw OptionError(name(o) + " " + text + " differs from the run being resumed (" + key + "=" +
                        kept.at(key) + "); a resumed run keeps its hyper-parameters");
    }
  }
  return typed(values);
}

}  // namespace tenet::train
