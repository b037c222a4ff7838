// tenet._tenet's training functions (training.h): the options table and a
// training run, the same train/ code as `tenet train`.
#include "python/src/training.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <optional>

#include "train/loop.h"
#include "train/options.h"
#include "train/standalone_project.h"
#include "train/trainable_model.h"

namespace py = pybind11;

namespace tenet::python {

namespace {

const char* type_name(train::OptionType type) {
  switch (type) {
    case train::OptionType::Choice:
      return "choice";
    case train::OptionType::Bool:
      return "bool";
    case train::OptionType::Integer:
      return "integer";
    case train::OptionType::Number:
      return "number";
  }
  return "";
}

/// The table as dicts: name, type, range (text), default (text, None when
/// the model or the caller must give it), help, choices.
py::list options_table() {
  py::list table;
  for (const train::TrainingOption& o : train::training_options()) {
    py::dict d;
    d["name"] = o.name;
    d["type"] = type_name(o.type);
    d["range"] = o.range();
    d["default"] = o.default_value.empty() ? py::object(py::none()) : py::str(o.default_value);
    d["help"] = o.help;
    d["choices"] = o.choices;
    table.append(d);
  }
  return table;
}

/// Lines go to a Python callable (with the GIL), or nowhere.
class CallbackReporter final : public train::TrainingReporter {
 public:
  explicit CallbackReporter(std::optional<py::function> on_line) : on_line_(std::move(on_line)) {}

  void line(const std::string& text) override { send(text); }
  void warning(const std::string& text) override { send("warning: " + text); }

 private:
  void send(const std::string& text) {
    if (!on_line_) return;
    py::gil_scoped_acquire gil;
    (*on_line_)(text);
  }

  std::optional<py::function> on_line_;
};

py::dict train_model(const std::string& model_path, const std::optional<std::string>& data,
                     const std::optional<std::string>& out, bool overwrite,
                     const train::OptionValues& options,
                     const std::optional<int64_t>& checkpoint_every,
                     const std::optional<int64_t>& log_every, bool verbose,
                     std::optional<py::function> on_line) {
  const train::OptionNamer keyword = [](const train::TrainingOption& o) { return o.name; };
  train::check_option_values(options, keyword);
  train::RunOptions run;
  run.data_dir = data ? *data : train::default_data_dir();
  run.run_dir = out ? *out : train::default_run_dir(model_path);
  if (checkpoint_every) {
    if (*checkpoint_every < 0)
      throw BindError(
          "checkpoint_every must be a non-negative integer (0: at the end of each "
          "epoch only), not " +
          std::to_string(*checkpoint_every));
    run.checkpoint_every = *checkpoint_every;
  }
  if (log_every) {
    if (*log_every < 1)
      throw BindError("log_every must be a positive integer, not " + std::to_string(*log_every));
    run.log_every = *log_every;
  }
  if (!overwrite) {
    train::RunDirConflict conflict = train::run_dir_conflict(run);
    if (!conflict.message.empty())
      throw BindError(conflict.message + ": pass another out, or overwrite=True");
  }
  // Made and destroyed with the GIL: it holds a Python callable.
  CallbackReporter reporter(std::move(on_line));
  train::TrainingResult result;
  {
    py::gil_scoped_release release;
    train::TrainableModel model(model_path, verbose);
    train::HyperParams hyper = train::resolve_hyper_params(options, model.spec().defaults, keyword);
    train::MnistDataset train_data =
        train::load_mnist_dir(run.data_dir, train::MnistSplit::Train, hyper.limit_train);
    train::MnistDataset test_data =
        train::load_mnist_dir(run.data_dir, train::MnistSplit::Test, hyper.limit_test);
    result = train::run_training(model, hyper, run, train_data, test_data, reporter);
  }
  py::dict d;
  d["run_dir"] = run.run_dir;
  d["checkpoint"] = result.checkpoint;
  d["log"] = run.run_dir + "/log.csv";
  d["steps"] = result.steps;
  d["epochs"] = result.epochs;
  d["test_loss"] = result.test_loss;
  d["test_accuracy"] = result.test_accuracy;
  return d;
}

}  // namespace

void bind_training(py::module_& m) {
  m.def("training_options", &options_table,
        "the trainer's options table: dicts of name, type, range, default, help, choices");
  m.def("train", &train_model, py::arg("model"), py::arg("data"), py::arg("out"),
        py::arg("overwrite"), py::arg("options"), py::arg("checkpoint_every"), py::arg("log_every"),
        py::arg("verbose"), py::arg("on_line"),
        "trains a model file's model (its '# @' directives) on MNIST; see tenet.train");
  m.def(
      "emit_standalone",
      [](const std::string& model, const std::string& out, bool overwrite) {
        train::StandaloneOptions options;
        options.overwrite = overwrite;
        py::gil_scoped_release release;
        return train::emit_standalone_project(model, out, options);
      },
      py::arg("model"), py::arg("out"), py::arg("overwrite"),
      "writes a C++ project that trains and runs the model without Tenet (tenet emit --train)");
}

}  // namespace tenet::python
