/// \file
/// The trainer's hyper-parameters: ONE table of options (name, type, range,
/// default, help). The model's `# @defaults` lines (model_spec.h), the
/// `tenet train` flags (tools/train_commands.cpp: flags and help are made
/// from the table) and Python's `tenet.train(**options)` all check values
/// against it, so a value one accepts the others accept, and every message
/// names the option and its range the same way.
///
/// Expects: option values as text ("0.001", "true", "adam"), as a directive,
/// a flag or Python gives them.
/// Guarantees: a value is valid iff TrainingOption::accepts says so; a
/// HyperParams made by resolve_hyper_params or from_map holds only valid
/// values; every default and range is written here, nowhere else.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "support/error.h"

namespace tenet::train {

enum class OptionType { Choice, Bool, Integer, Number };

struct TrainingOption {
  std::string name;  // the @defaults key and Python keyword; the flag is --name, '_' as '-'
  OptionType type = OptionType::Number;
  std::string help;
  std::string default_value;         // "": none, the model's @defaults or the user must give it
  std::vector<std::string> choices;  // Choice: the values
  // Integer: a decimal in [int_min, int_max]. Number: a finite number
  // between min and max, an open end excluded.
  uint64_t int_min = 0, int_max = 0;
  double min = 0, max = 0;
  bool min_open = false, max_open = false;

  /// "--lr-decay-every".
  std::string flag() const;
  /// What a valid value is: "an integer from 1 to 1048576", "a number in
  /// (0, 1]", "a positive number", "adam, sgd or adadelta", "true or false".
  std::string range() const;
  /// Whether `text` is a valid value (exactly: no blanks, no sign on integers).
  bool accepts(const std::string& text) const;
};

/// Every option, in the order help texts list them.
const std::vector<TrainingOption>& training_options();
/// The option called `name`, or null.
const TrainingOption* find_training_option(const std::string& name);
/// "optimizer, lr, momentum, ...": for messages listing the options.
std::string training_option_names();

/// A bad option name or value. `what()` names the option as the caller
/// does (`--lr`, `lr`) and its range.
class OptionError : public BindError {
 public:
  using BindError::BindError;
};

/// "<named> must be <range>, not '<text>'": the message of every bad value.
std::string bad_value_message(const TrainingOption& option, const std::string& named,
                              const std::string& text);

/// Option values as text, by option name.
using OptionValues = std::map<std::string, std::string>;

/// How the caller's user writes an option in messages: the CLI's "--lr",
/// Python's "lr".
using OptionNamer = std::function<std::string(const TrainingOption&)>;

/// Hyper-parameters: what decides the parameters a run produces, one field
/// per option of the table. Made only by resolve_hyper_params,
/// resumed_hyper_params and from_map (the defaults are the table's); a
/// resumed run takes them from its checkpoint.
struct HyperParams {
  std::string optimizer;  // "adam", "sgd" or "adadelta"
  double lr = 0;
  double momentum = 0;
  bool nesterov = false;
  double weight_decay = 0;
  double lr_decay = 0;
  int64_t lr_decay_every = 0;
  bool lr_decay_staircase = false;  // lr x lr_decay^floor(step / lr_decay_every)
  int64_t batch = 0;
  int64_t epochs = 0;
  int64_t shift = 0;
  uint64_t seed = 0;
  int64_t limit_train = 0;  // 0: every training image
  int64_t limit_test = 0;   // 0: every test image
  int64_t shards = 0;       // parts of a batch (data_parallel.h); 0: one per process

  /// Every option's value as text (checkpoint metadata, keys as in @defaults).
  OptionValues to_map() const;
  /// The same back from checkpoint metadata; a missing key takes the table's
  /// default when there is one. A BindError naming `source` otherwise, or
  /// when a value is out of its range.
  static HyperParams from_map(const OptionValues& values, const std::string& source);
};

/// An OptionError for an unknown name or a bad value in `values` (named by `name`).
void check_option_values(const OptionValues& values, const OptionNamer& name);

/// A run's hyper-parameters: each option from `given` (the user's flags or
/// keywords), else the model's @defaults, else the table's default. An
/// OptionError for an unknown name or a bad value in `given` (named by
/// `name`), or an option that none of the three sets.
HyperParams resolve_hyper_params(const OptionValues& given, const OptionValues& model_defaults,
                                 const OptionNamer& name);

/// A resumed run keeps `saved`'s hyper-parameters: `given` may repeat one
/// (numbers compare as numbers) but not change it, except `epochs`, which
/// may grow the run, and `shards` (a run resumed on another number of
/// processes may need another). An OptionError names the option and both values.
HyperParams resumed_hyper_params(const HyperParams& saved, const OptionValues& given,
                                 const OptionNamer& name);

}  // namespace tenet::train
