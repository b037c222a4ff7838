// The table of training options (train/options.h): each option's range as
// text and as the values it accepts, the precedence flag > @defaults > table
// default, the messages that name an option and its range, and a resumed
// run's hyper-parameters.
#include <gtest/gtest.h>

#include <set>

#include "tests/train/train_test_util.h"
#include "train/options.h"

namespace tenet::train {
namespace {

using testing::expect_error;

std::string as_flag(const TrainingOption& o) {
  return o.flag();
}

/// What the model files in models/ set: every option without a table default.
const OptionValues kModelDefaults = {
    {"optimizer", "adam"}, {"lr", "0.001"}, {"batch", "64"}, {"epochs", "5"}};

const TrainingOption& option(const std::string& name) {
  const TrainingOption* o = find_training_option(name);
  EXPECT_NE(o, nullptr) << name;
  return *o;
}

TEST(TrainingOptions, EveryOptionIsAHyperParameterOnce) {
  std::set<std::string> names;
  for (const TrainingOption& o : training_options()) {
    EXPECT_TRUE(names.insert(o.name).second) << o.name << " twice";
    EXPECT_FALSE(o.help.empty()) << o.name;
    // A default, when there is one, is in the range.
    if (!o.default_value.empty()) {
      EXPECT_TRUE(o.accepts(o.default_value)) << o.name;
    }
  }
  // The table and HyperParams hold the same options.
  std::set<std::string> fields;
  for (const auto& [key, value] : resolve_hyper_params({}, kModelDefaults, as_flag).to_map())
    fields.insert(key);
  EXPECT_EQ(names, fields);
  EXPECT_EQ(option("lr_decay_every").flag(), "--lr-decay-every");
}

TEST(TrainingOptions, RangesAsTextAndAsValues) {
  struct Case {
    std::string option, range;
    std::vector<std::string> good, bad;
  };
  const Case cases[] = {
      {"optimizer", "adam, sgd or adadelta", {"adam", "sgd", "adadelta"}, {"rmsprop", "Adam", ""}},
      {"lr", "a positive number", {"0.001", "1e-3", "10"}, {"0", "-1", "fast", "inf", "nan", " 1"}},
      {"momentum", "a number in [0, 1]", {"0", "0.9", "1"}, {"1.5", "-0.1", "0.9x"}},
      {"nesterov", "true or false", {"true", "false"}, {"yes", "1", "True"}},
      {"weight_decay", "a non-negative number", {"0", "5e-4"}, {"-1e-9"}},
      {"lr_decay", "a number in (0, 1]", {"1", "0.7"}, {"0", "1.5"}},
      {"lr_decay_every", "a positive integer", {"1", "938"}, {"0", "-1", "1.5"}},
      {"batch", "an integer from 1 to 1048576", {"1", "1048576"}, {"0", "1048577", "2.5", "+3"}},
      {"epochs", "an integer from 1 to 1048576", {"30"}, {"two", "0"}},
      {"shift", "an integer from 0 to 27", {"0", "27"}, {"28", "-1"}},
      {"seed",
       "a non-negative integer",
       {"0", "18446744073709551615"},
       {"18446744073709551616", "-1", " 7"}},
      {"limit_train", "a non-negative integer", {"0", "100"}, {"9223372036854775808"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.option);
    const TrainingOption& o = option(c.option);
    EXPECT_EQ(o.range(), c.range);
    for (const std::string& v : c.good) EXPECT_TRUE(o.accepts(v)) << v;
    for (const std::string& v : c.bad) EXPECT_FALSE(o.accepts(v)) << v;
  }
}

TEST(TrainingOptions, GivenThenModelDefaultsThenTheTable) {
  HyperParams h = resolve_hyper_params(
      {{"lr", "0.5"}, {"nesterov", "true"}},
      {{"optimizer", "sgd"}, {"lr", "0.1"}, {"momentum", "0.9"}, {"batch", "10"}, {"epochs", "2"}},
      as_flag);
  EXPECT_EQ(h.optimizer, "sgd");
  EXPECT_EQ(h.lr, 0.5);        // given
  EXPECT_EQ(h.momentum, 0.9);  // the model's
  EXPECT_TRUE(h.nesterov);     // given
  EXPECT_EQ(h.lr_decay, 1.0);  // the table's
  EXPECT_EQ(h.lr_decay_every, 1);
  EXPECT_EQ(h.shift, 0);
  EXPECT_EQ(h.seed, 1u);
  EXPECT_EQ(h.batch, 10);
  EXPECT_EQ(h.epochs, 2);
  // Through checkpoint metadata and back.
  HyperParams back = HyperParams::from_map(h.to_map(), "ck");
  EXPECT_EQ(back.to_map(), h.to_map());
}

TEST(TrainingOptions, MessagesNameTheOptionAndItsRange) {
  expect_error(
      [] {
        resolve_hyper_params({{"momentum", "1.5"}}, kModelDefaults, as_flag);
      },
      {"--momentum must be a number in [0, 1], not '1.5'"});
  expect_error(
      [] {
        resolve_hyper_params({{"batch", "2.5"}}, kModelDefaults,
                             [](const TrainingOption& o) { return o.name; });
      },
      {"batch must be an integer from 1 to 1048576, not '2.5'"});
  expect_error(
      [] {
        resolve_hyper_params({{"speed", "1"}}, kModelDefaults, as_flag);
      },
      {"unknown training option 'speed'; the options are: optimizer, lr, momentum, "});
  expect_error(
      [] {
        resolve_hyper_params({}, {{"optimizer", "adam"}}, as_flag);
      },
      {"no lr given: pass --lr or add lr=... to the model's '# @defaults' line"});
  expect_error(
      [] {
        HyperParams::from_map({{"optimizer", "adam"}}, "ck.safetensors");
      },
      {"ck.safetensors: checkpoint metadata has no 'lr': not a checkpoint"});
  OptionValues bad = resolve_hyper_params({}, kModelDefaults, as_flag).to_map();
  bad["shift"] = "99";
  expect_error([&] { HyperParams::from_map(bad, "ck.safetensors"); },
               {"ck.safetensors: malformed hyper-parameters in the checkpoint metadata: 'shift' "
                "must be an integer from 0 to 27, not '99'"});
}

TEST(TrainingOptions, AResumedRunKeepsItsHyperParameters) {
  const HyperParams saved = resolve_hyper_params({}, kModelDefaults, as_flag);
  // Repeating a value (as another spelling of the same number) and raising
  // the epochs are fine.
  HyperParams h = resumed_hyper_params(saved, {{"lr", "1e-3"}, {"epochs", "9"}}, as_flag);
  EXPECT_EQ(h.epochs, 9);
  EXPECT_EQ(h.lr, saved.lr);
  expect_error(
      [&] {
        resumed_hyper_params(saved, {{"batch", "5"}}, as_flag);
      },
      {"--batch 5 differs from the run being resumed (batch=64); a resumed run keeps "
       "its hyper-parameters"});
  expect_error(
      [&] {
        resumed_hyper_params(saved, {{"epochs", "0"}}, as_flag);
      },
      {"--epochs must be an integer from 1 to 1048576, not '0'"});
}

}  // namespace
}  // namespace tenet::train
