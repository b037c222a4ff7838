// `tenet train`, `tenet eval` and `tenet predict` (train_commands.h): flags
// (the hyper-parameters' from train/options.h's table), run directories,
// checkpoints and data, and the console the training loop reports to.
#include "tools/train_commands.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/error.h"
#include "tools/program.h"
#include "train/checkpoint.h"
#include "train/loop.h"
#include "train/metrics.h"
#include "train/mnist.h"
#include "train/options.h"
#include "train/safetensors.h"
#include "train/team.h"
#include "train/trainable_model.h"

namespace tenet::cli {

namespace fs = std::filesystem;
using train::DatasetEvaluation;
using train::HyperParams;
using train::RunOptions;
using train::TrainableModel;
using train::TrainingOption;

namespace {

// The model file's warnings on stderr, as every command that compiles shows them.
void show_warnings(const TrainableModel& model) {
  if (std::string text = model.warnings(); !text.empty()) std::cerr << text << "\n";
}

int64_t parse_int(const std::string& what, const std::string& text, int64_t lo, int64_t hi) {
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < lo || v > hi)
    throw UsageError(what + " expects an integer from " + std::to_string(lo) +
                     (hi == INT64_MAX ? " up" : " to " + std::to_string(hi)) + ", not '" + text +
                     "'");
  return v;
}

/// The flag's metavariable: "adam|sgd|adadelta", "N", "X".
std::string meta_of(const TrainingOption& o) {
  switch (o.type) {
    case train::OptionType::Choice: {
      std::string meta;
      for (const std::string& c : o.choices) meta += (meta.empty() ? "" : "|") + c;
      return meta;
    }
    case train::OptionType::Integer:
      return "N";
    default:
      return "X";
  }
}

/// One flag per training option (a Bool option is a flag without a value),
/// its help from the table: what it means, its range and its default.
void add_training_options(Args& a) {
  for (const TrainingOption& o : train::training_options()) {
    std::string fallback = o.default_value.empty() ? "" : ", else " + o.default_value;
    if (o.type == train::OptionType::Bool) {
      a.flag(o.flag().substr(2), o.help + " (default: the model's @defaults" + fallback + ")");
    } else {
      a.option(o.flag().substr(2), meta_of(o),
               o.help + "; " + o.range() + " (default: the model's @defaults" + fallback + ")");
    }
  }
}

/// The training options the command line sets, by option name: a Bool flag
/// given is "true".
train::OptionValues given_training_options(const Args& a) {
  train::OptionValues given;
  for (const TrainingOption& o : train::training_options()) {
    const std::string flag = o.flag().substr(2);
    if (a.is_set(flag)) given[o.name] = o.type == train::OptionType::Bool ? "true" : a.get(flag);
  }
  return given;
}

std::string flag_name(const TrainingOption& o) {
  return o.flag();
}

/// The console the training loop reports to: lines on stdout (warnings on
/// stderr) and a progress bar per epoch (a TTY line, or plain lines).
class ConsoleReporter final : public train::TrainingReporter {
 public:
  void line(const std::string& text) override {
    // On a terminal the progress bar holds the line: clear it first (the bar
    // is redrawn at the next step).
    bool clear = progress_ && progress_->tty();
    std::printf("%s%s\n", clear ? "\r\033[K" : "", text.c_str());
    std::fflush(stdout);
  }
  void warning(const std::string& text) override {
    std::fprintf(stderr, "warning: %s\n", text.c_str());
  }
  void epoch_begins(const std::string& label, int64_t total_steps, int64_t first_step) override {
    train::ProgressOptions po;
    po.label = label;
    po.total_steps = total_steps;
    po.first_step = first_step;
    progress_.emplace(stdout, po);
  }
  void step_done(int64_t step, int64_t images, double loss, double accuracy) override {
    if (progress_) progress_->update(step, images, loss, accuracy);
  }
  void epoch_ends() override {
    if (progress_) progress_->finish();
    progress_.reset();
  }

 private:
  std::optional<train::ProgressReporter> progress_;
};

/// --resume takes a checkpoint file or a run directory (its last.safetensors).
/// Runs `command` as this process's part of the job an MPI launcher
/// started (train/team.h); alone, just runs it. A failure every rank sees
/// alike (a TeamError) is reported once, by rank 0, and the job ends in
/// order; any other failure is reported by its rank and ends the whole job
/// (MPI_Abort), since the others would wait for it forever.
int as_part_of_the_job(const std::function<int(train::Team&)>& command) {
  train::Team& team = train::Team::world();
  if (team.size() == 1) return command(team);
  const std::string rank =
      "rank " + std::to_string(team.rank()) + " of " + std::to_string(team.size());
  try {
    const int status = command(team);
    team.finish();
    return status;
  } catch (const train::TeamError& e) {
    if (e.lost()) {
      std::fprintf(stderr, "error (%s): %s\n", rank.c_str(), e.what());
      team.abort(1);
    }
    if (team.leader()) std::fprintf(stderr, "error: %s\n", e.what());
    team.finish();
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error (%s): %s; ending the job\n", rank.c_str(), e.what());
  }
  std::fflush(stderr);
  team.abort(1);
}

std::string checkpoint_file(const std::string& given, const std::string& flag) {
  std::string path = fs::is_directory(given) ? given + "/last.safetensors" : given;
  if (!fs::exists(path))
    throw UsageError(flag + ": " + path + " does not exist" +
                     (fs::is_directory(given) ? " (the run has not saved a checkpoint yet)" : ""));
  return path;
}

void add_model_options(Args& a) {
  a.option("data", "DIR", "MNIST folder: train-*/t10k-* IDX files, .gz or not",
           "the bundled data/mnist-sample");
  a.flag("verbose", "print the JIT's compiler commands and cache hits");
  a.option("device", "cpu|cuda|cuda-emulated",
           "where the steps run: the CPU, an NVIDIA GPU, or the GPU's kernels emulated on the CPU "
           "(checkpoints are the same files)",
           "cpu");
}

/// --device as a code target (driver/target.h).
std::string device_target(const Args& a) {
  const std::string device = a.get("device");
  if (device == "cpu") return driver::kDefaultTarget;
  if (device == "cuda" || device == "cuda-emulated") return device;
  throw UsageError("--device must be cpu, cuda or cuda-emulated, not '" + device + "'");
}

std::string data_dir(const Args& a) {
  return a.is_set("data") ? a.get("data") : train::default_data_dir();
}

/// A new run, or a resumed one in another folder than its checkpoint's,
/// must not overwrite files already there (a user's log.csv, another run).
void refuse_to_overwrite(const RunOptions& options) {
  train::RunDirConflict conflict = train::run_dir_conflict(options);
  if (conflict.message.empty()) return;
  if (conflict.holds_a_run)
    throw UsageError(conflict.message + ": continue it with --resume " + options.run_dir +
                     ", or start afresh with --overwrite or another --out");
  throw UsageError(conflict.message + ": choose another --out, or --overwrite");
}

/// The run's folders and intervals. A resumed run (`saved`: its checkpoint)
/// continues in the checkpoint's folder, with its data folder and intervals,
/// unless flags say otherwise. Without --overwrite, a run refuses a folder
/// that holds another run or files it would overwrite.
RunOptions run_options(const Args& a, const std::string& model_path,
                       const train::SafetensorsFile* saved) {
  auto saved_or_flag = [&](const std::string& key, const std::string& flag) {
    if (!saved || a.is_set(flag)) return a.get(flag);
    auto it = saved->metadata.find(key);
    return it == saved->metadata.end() ? a.get(flag) : it->second;
  };
  RunOptions options;
  options.spell = [](const std::string& option) { return "--" + option; };
  if (saved) {
    options.resume = checkpoint_file(a.get("resume"), "--resume");
    auto data = saved->metadata.find("data");
    options.data_dir =
        a.is_set("data") || data == saved->metadata.end() ? data_dir(a) : data->second;
    options.run_dir =
        a.is_set("out") ? a.get("out") : fs::path(options.resume).parent_path().string();
  } else {
    options.data_dir = data_dir(a);
    options.run_dir = a.is_set("out") ? a.get("out") : train::default_run_dir(model_path);
  }
  if (options.run_dir.empty()) options.run_dir = ".";
  if (!a.is_set("overwrite")) refuse_to_overwrite(options);
  options.checkpoint_every =
      parse_int("--checkpoint-every", saved_or_flag("run.checkpoint_every", "checkpoint-every"), 0,
                INT64_MAX);
  options.log_every =
      parse_int("--log-every", saved_or_flag("run.log_every", "log-every"), 1, INT64_MAX);
  return options;
}

int train_model(const Args& a, train::Team& team);

}  // namespace

int cmd_train(const std::vector<std::string>& argv) {
  Args a("train", "MODEL.tn [options]",
         "Trains a model on MNIST. The model file declares its training and evaluation\n"
         "functions, data inputs, dropout masks, parameters with their initialisers and\n"
         "default hyper-parameters in '# @...' lines (docs/training.md); a flag overrides\n"
         "a default. Each epoch ends with a test-set evaluation; RUNDIR gets log.csv and\n"
         "checkpoints (last.safetensors) that --resume continues from exactly.");
  add_model_options(a);
  add_training_options(a);
  RunOptions defaults;
  a.option("out", "RUNDIR", "run directory", "runs/<model name>");
  a.flag("overwrite", "start afresh in a RUNDIR that holds a run (or files a run writes)");
  a.option("checkpoint-every", "STEPS", "also checkpoint every STEPS steps (0: each epoch only)",
           std::to_string(defaults.checkpoint_every));
  a.option("log-every", "STEPS", "steps per training row of log.csv",
           std::to_string(defaults.log_every));
  a.option("resume", "CKPT|RUNDIR",
           "continue a run from a checkpoint (or RUNDIR/last.safetensors)");
  if (!a.parse(argv)) return 0;
  return as_part_of_the_job([&](train::Team& team) { return train_model(a, team); });
}

namespace {

/// `tenet train` once its flags are parsed, on each rank of the job.
int train_model(const Args& a, train::Team& team) {
  std::string model_path = require_file(a);
  const train::OptionValues given = given_training_options(a);
  train::check_option_values(given, flag_name);

  std::optional<train::SafetensorsFile> saved;
  if (a.is_set("resume")) {
    std::string path = checkpoint_file(a.get("resume"), "--resume");
    saved = train::read_safetensors(path);
    if (!saved->metadata.count("tenet.format"))
      throw UsageError("--resume: " + path + " is not a checkpoint of `tenet train`");
  }
  RunOptions options = run_options(a, model_path, saved ? &*saved : nullptr);

  // The model's directives and the data before anything compiles.
  TrainableModel model(model_path, a.is_set("verbose"), device_target(a));
  show_warnings(model);
  HyperParams hyper =
      saved ? train::resumed_hyper_params(HyperParams::from_map(saved->metadata, options.resume),
                                          given, flag_name)
            : train::resolve_hyper_params(given, model.spec().defaults, flag_name);
  train::MnistDataset train_data =
      train::load_mnist_dir(options.data_dir, train::MnistSplit::Train, hyper.limit_train);
  train::MnistDataset test_data =
      train::load_mnist_dir(options.data_dir, train::MnistSplit::Test, hyper.limit_test);
  ConsoleReporter console;  // rank 0's: the others say nothing (loop.h)
  train::run_training(model, hyper, options, train_data, test_data, console);
  return 0;
}

}  // namespace

int cmd_eval(const std::vector<std::string>& argv) {
  Args a("eval", "MODEL.tn --checkpoint CKPT [options]",
         "Evaluates a trained model on the MNIST test set: accuracy and mean loss, from the\n"
         "model's evaluation function. CKPT is a checkpoint of `tenet train` (or its run\n"
         "directory), or a safetensors file holding every parameter by name.");
  add_model_options(a);
  a.option("checkpoint", "CKPT|RUNDIR", "the trained parameters");
  a.option("batch", "B", "evaluation batch size", "100");
  a.option("limit", "N", "evaluate the first N test images (0: all)", "0");
  if (!a.parse(argv)) return 0;
  std::string model_path = require_file(a);
  if (!a.is_set("checkpoint")) throw UsageError("tenet eval needs --checkpoint CKPT");
  std::string checkpoint = checkpoint_file(a.get("checkpoint"), "--checkpoint");
  int64_t batch = parse_int("--batch", a.get("batch"), 1, 1 << 20);
  int64_t limit = parse_int("--limit", a.get("limit"), 0, INT64_MAX);
  train::MnistDataset test = train::load_mnist_dir(data_dir(a), train::MnistSplit::Test, limit);

  TrainableModel model(model_path, a.is_set("verbose"), device_target(a));
  show_warnings(model);
  model.load_weights(checkpoint);
  DatasetEvaluation e = train::evaluate_dataset(model, test, batch);
  std::printf("test accuracy %.2f%% (%lld/%lld)", 100.0 * e.accuracy(),
              static_cast<long long>(e.correct), static_cast<long long>(e.total));
  if (model.eval_has_loss()) std::printf(", loss %.9g", e.loss);
  std::printf(" [%s, %s]\n", data_dir(a).c_str(), train::format_duration(e.seconds).c_str());
  return 0;
}

int cmd_predict(const std::vector<std::string>& argv) {
  Args a("predict", "MODEL.tn --checkpoint CKPT (--images FILE | --data DIR) [options]",
         "Prints the predicted class and the class scores of images: those of an IDX image\n"
         "file (.gz or not), or the test images of an MNIST folder (with their labels).");
  add_model_options(a);
  a.option("checkpoint", "CKPT|RUNDIR", "the trained parameters");
  a.option("images", "FILE", "an IDX image file (magic 2051), 28x28 images");
  a.option("limit", "N", "predict the first N images (0: all)", "10");
  a.option("batch", "B", "batch size", "100");
  if (!a.parse(argv)) return 0;
  std::string model_path = require_file(a);
  if (!a.is_set("checkpoint")) throw UsageError("tenet predict needs --checkpoint CKPT");
  if (a.is_set("images") && a.is_set("data"))
    throw UsageError("give --images FILE or --data DIR, not both");
  std::string checkpoint = checkpoint_file(a.get("checkpoint"), "--checkpoint");
  int64_t limit = parse_int("--limit", a.get("limit"), 0, INT64_MAX);
  int64_t batch = parse_int("--batch", a.get("batch"), 1, 1 << 20);

  train::MnistDataset data;
  bool labelled = !a.is_set("images");
  if (labelled) {
    data = train::load_mnist_dir(data_dir(a), train::MnistSplit::Test, limit);
  } else {
    Tensor pixels = train::read_idx_images(a.get("images"));
    int64_t n = pixels.shape()[0];
    if (limit > 0) n = std::min(n, limit);
    data.images = Tensor(ElemType::F32, {n, 1, train::kMnistRows, train::kMnistCols});
    for (int64_t i = 0; i < data.images.numel(); ++i)
      data.images.data<float>()[i] = float(pixels.data<uint8_t>()[i]) / 255.0f;
    data.labels = Tensor(ElemType::I32, {n});  // unknown: zeros, not printed
  }
  TrainableModel model(model_path, a.is_set("verbose"), device_target(a));
  show_warnings(model);
  model.load_weights(checkpoint);

  train::BatchOptions options;
  options.batch_size = batch;
  train::Batcher batcher(data, options);
  batcher.start_epoch(0);
  std::printf("%6s %6s %10s  %s[0..9]\n", "image", "label", "predicted",
              model.spec().eval.scores.c_str());
  int64_t correct = 0;
  train::Batch b;
  while (batcher.next(b)) {
    TrainableModel::Evaluation e = model.evaluate(*b.images, labelled ? *b.labels : Tensor());
    for (int64_t i = 0; i < b.size; ++i) {
      int64_t predicted = train::argmax_row(e.scores, i);
      int32_t label = b.labels->data<int32_t>()[i];
      correct += predicted == label;
      std::printf("%6lld %6s %10lld ", static_cast<long long>(b.indices[i]),
                  labelled ? std::to_string(label).c_str() : "-",
                  static_cast<long long>(predicted));
      for (int64_t k = 0; k < e.scores.shape()[1]; ++k)
        std::printf(" %.4g", e.scores.data<float>()[i * e.scores.shape()[1] + k]);
      std::printf("\n");
    }
  }
  if (labelled)
    std::printf("%lld of %lld predictions match the labels (%.2f%%)\n",
                static_cast<long long>(correct), static_cast<long long>(data.size()),
                data.size() > 0 ? 100.0 * double(correct) / double(data.size()) : 0.0);
  return 0;
}

}  // namespace tenet::cli
