// `tenet train`, `tenet eval` and `tenet predict` (train_commands.h): flags,
// hyper-parameters (flag, else the model's @defaults), run directories,
// checkpoints and data.
#include "tools/train_commands.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/error.h"
#include "tools/program.h"
#include "tools/train_loop.h"
#include "tools/train_model.h"
#include "train/checkpoint.h"
#include "train/metrics.h"
#include "train/mnist.h"
#include "train/safetensors.h"

namespace tenet::cli {

namespace fs = std::filesystem;

namespace {

/// The bundled sample (data/mnist-sample), unless $TENET_DATA_DIR says otherwise.
std::string default_data_dir() {
  if (const char* dir = std::getenv("TENET_DATA_DIR")) return dir;
  return TENET_SAMPLE_DATA_DIR;
}

std::string flag_of(const std::string& key) {
  std::string flag = key;
  for (char& c : flag)
    if (c == '_') c = '-';
  return "--" + flag;
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

/// A number in [lo, hi] (lo excluded when lo_open); `expects` describes the
/// range in the message: "a positive number".
double parse_double(const std::string& what, const std::string& text, double lo, double hi,
                    bool lo_open, const std::string& expects) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  bool ok =
      !text.empty() && *end == '\0' && std::isfinite(v) && v <= hi && (lo_open ? v > lo : v >= lo);
  if (!ok) throw UsageError(what + " expects " + expects + ", not '" + text + "'");
  return v;
}

/// Where each hyper-parameter comes from: the flag, else the model's
/// @defaults, else a fallback (none: the user must say).
class Settings {
 public:
  Settings(const Args& args, const ModelSpec& spec) : args_(args), spec_(spec) {}

  std::string get(const std::string& key, const std::optional<std::string>& fallback) const {
    std::string flag = flag_of(key).substr(2);
    if (args_.is_set(flag)) return args_.get(flag);
    if (auto it = spec_.defaults.find(key); it != spec_.defaults.end()) return it->second;
    if (fallback) return *fallback;
    throw UsageError("no " + key + " given: pass " + flag_of(key) + " or add " + key +
                     "=... to the model's '# @defaults' line");
  }

 private:
  const Args& args_;
  const ModelSpec& spec_;
};

HyperParams hyper_params_from(const Args& a, const ModelSpec& spec) {
  Settings s(a, spec);
  HyperParams h;
  h.optimizer = s.get("optimizer", std::nullopt);
  if (h.optimizer != "adam" && h.optimizer != "sgd" && h.optimizer != "adadelta")
    throw UsageError("--optimizer must be adam, sgd or adadelta, not '" + h.optimizer + "'");
  h.lr = parse_double("--lr", s.get("lr", std::nullopt), 0, HUGE_VAL, true, "a positive number");
  h.momentum =
      parse_double("--momentum", s.get("momentum", "0"), 0, 1, false, "a number in [0, 1]");
  std::string nesterov = a.is_set("nesterov") ? "true" : s.get("nesterov", "false");
  h.nesterov = nesterov == "true";
  h.weight_decay = parse_double("--weight-decay", s.get("weight_decay", "0"), 0, HUGE_VAL, false,
                                "a non-negative number");
  h.lr_decay = parse_double("--lr-decay", s.get("lr_decay", "1"), 0, 1, true, "a number in (0, 1]");
  h.lr_decay_every = parse_int("--lr-decay-every", s.get("lr_decay_every", "1"), 1, INT64_MAX);
  std::string staircase =
      a.is_set("lr-decay-staircase") ? "true" : s.get("lr_decay_staircase", "false");
  h.lr_decay_staircase = staircase == "true";
  h.batch = parse_int("--batch", s.get("batch", std::nullopt), 1, 1 << 20);
  h.epochs = parse_int("--epochs", s.get("epochs", std::nullopt), 1, 1 << 20);
  h.shift = parse_int("--shift", s.get("shift", "0"), 0, 27);
  h.seed = parse_seed(a.get("seed"));
  h.limit_train = parse_int("--limit-train", a.get("limit-train"), 0, INT64_MAX);
  h.limit_test = parse_int("--limit-test", a.get("limit-test"), 0, INT64_MAX);
  return h;
}

/// On resume the checkpoint's hyper-parameters hold; a flag may repeat one
/// but not change it (--epochs may, to train longer).
HyperParams resumed_hyper_params(const Args& a, const HyperParams& saved) {
  HyperParams h = saved;
  std::map<std::string, std::string> values = saved.to_map();
  for (const auto& [key, value] : values) {
    std::string flag = flag_of(key).substr(2);
    if (key == "epochs" || !a.is_set(flag)) continue;
    const bool is_flag = key == "nesterov" || key == "lr_decay_staircase";
    std::string given = is_flag ? "true" : a.get(flag);
    if (given != value) {
      // Compare numbers as numbers: --lr 0.001 and 0.001000 agree.
      char* end = nullptr;
      double g = std::strtod(given.c_str(), &end);
      bool same_number = *end == '\0' && !given.empty() && g == std::strtod(value.c_str(), nullptr);
      if (!same_number)
        throw UsageError("--" + flag + " " + given + " differs from the run being resumed (" + key +
                         "=" + value + "); a resumed run keeps its hyper-parameters");
    }
  }
  if (a.is_set("epochs")) h.epochs = parse_int("--epochs", a.get("epochs"), 1, 1 << 20);
  return h;
}

/// --resume takes a checkpoint file or a run directory (its last.safetensors).
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
}

std::string data_dir(const Args& a) {
  return a.is_set("data") ? a.get("data") : default_data_dir();
}

/// The files a run writes in its folder (train_loop.h).
const char* const kRunFiles[] = {"last.safetensors", "log.csv", "model.tn"};

/// A new run, or a resumed one in another folder than its checkpoint's,
/// must not overwrite files already there (a user's log.csv, another run).
void refuse_to_overwrite(const RunOptions& options, bool resumed) {
  std::error_code ec;
  fs::path checkpoint_dir = fs::path(options.resume).parent_path();
  if (checkpoint_dir.empty()) checkpoint_dir = ".";
  if (resumed && fs::equivalent(options.run_dir, checkpoint_dir, ec))
    return;  // continuing a run in its own folder
  if (fs::exists(options.run_dir + "/last.safetensors", ec))
    throw UsageError(options.run_dir +
                     " already holds a run (last.safetensors): continue it with --resume " +
                     options.run_dir + ", or start afresh with --overwrite or another --out");
  std::string existing;
  for (const char* name : kRunFiles)
    if (fs::exists(fs::path(options.run_dir) / name, ec))
      existing += std::string(existing.empty() ? "" : " and ") + name;
  if (!existing.empty())
    throw UsageError(options.run_dir + " already holds " + existing +
                     ", which the run would overwrite: choose another --out, or --overwrite");
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
  if (saved) {
    options.resume = checkpoint_file(a.get("resume"), "--resume");
    auto data = saved->metadata.find("data");
    options.data_dir =
        a.is_set("data") || data == saved->metadata.end() ? data_dir(a) : data->second;
    options.run_dir =
        a.is_set("out") ? a.get("out") : fs::path(options.resume).parent_path().string();
  } else {
    options.data_dir = data_dir(a);
    options.run_dir =
        a.is_set("out") ? a.get("out") : "runs/" + fs::path(model_path).stem().string();
  }
  if (options.run_dir.empty()) options.run_dir = ".";
  if (!a.is_set("overwrite")) refuse_to_overwrite(options, saved != nullptr);
  options.checkpoint_every =
      parse_int("--checkpoint-every", saved_or_flag("run.checkpoint_every", "checkpoint-every"), 0,
                INT64_MAX);
  options.log_every =
      parse_int("--log-every", saved_or_flag("run.log_every", "log-every"), 1, INT64_MAX);
  return options;
}

}  // namespace

int cmd_train(const std::vector<std::string>& argv) {
  Args a("train", "MODEL.tn [options]",
         "Trains a model on MNIST. The model file declares its training and evaluation\n"
         "functions, data inputs, dropout masks, parameters with their initialisers and\n"
         "default hyper-parameters in '# @...' lines (docs/training.md); a flag overrides\n"
         "a default. Each epoch ends with a test-set evaluation; RUNDIR gets log.csv and\n"
         "checkpoints (last.safetensors) that --resume continues from exactly.");
  add_model_options(a);
  a.option("epochs", "N", "epochs to train (model default)");
  a.option("batch", "B", "batch size (model default)");
  a.option("optimizer", "adam|sgd|adadelta", "the optimiser (model default)");
  a.option("lr", "X", "learning rate (model default)");
  a.option("momentum", "M", "SGD momentum (model default, else 0)");
  a.flag("nesterov", "SGD with Nesterov momentum");
  a.option("weight-decay", "W", "L2 penalty added to the gradients (model default, else 0)");
  a.option("lr-decay", "R",
           "multiply the learning rate by R every --lr-decay-every steps, "
           "continuously (model default, else 1)");
  a.option("lr-decay-every", "STEPS", "steps per decay factor (model default, else 1)");
  a.flag("lr-decay-staircase",
         "decay in whole factors: lr x R^floor(step / STEPS), as torch's StepLR "
         "(model default, else continuous)");
  a.option("shift", "PIXELS",
           "augment training images with random shifts of up to PIXELS "
           "(model default, else 0)");
  a.option("seed", "S", "seed of initialisation, shuffling, shifts and dropout", "1");
  a.option("out", "RUNDIR", "run directory", "runs/<model name>");
  a.flag("overwrite", "start afresh in a RUNDIR that holds a run (or files a run writes)");
  a.option("checkpoint-every", "STEPS", "also checkpoint every STEPS steps (0: each epoch only)",
           "100");
  a.option("log-every", "STEPS", "steps per training row of log.csv", "20");
  a.option("resume", "CKPT|RUNDIR",
           "continue a run from a checkpoint (or RUNDIR/last.safetensors)");
  a.option("limit-train", "N", "use the first N training images (0: all)", "0");
  a.option("limit-test", "N", "use the first N test images (0: all)", "0");
  if (!a.parse(argv)) return 0;
  std::string model_path = require_file(a);

  std::optional<train::SafetensorsFile> saved;
  if (a.is_set("resume")) {
    std::string path = checkpoint_file(a.get("resume"), "--resume");
    saved = train::read_safetensors(path);
    if (!saved->metadata.count("tenet.format"))
      throw UsageError("--resume: " + path + " is not a checkpoint of `tenet train`");
  }
  RunOptions options = run_options(a, model_path, saved ? &*saved : nullptr);

  // The data first: a missing folder is reported before the model compiles.
  std::optional<HyperParams> resumed;
  if (saved) resumed = HyperParams::from_map(saved->metadata, options.resume);
  int64_t limit_train = resumed ? resumed->limit_train
                                : parse_int("--limit-train", a.get("limit-train"), 0, INT64_MAX);
  int64_t limit_test =
      resumed ? resumed->limit_test : parse_int("--limit-test", a.get("limit-test"), 0, INT64_MAX);
  train::MnistDataset train_data =
      train::load_mnist_dir(options.data_dir, train::MnistSplit::Train, limit_train);
  train::MnistDataset test_data =
      train::load_mnist_dir(options.data_dir, train::MnistSplit::Test, limit_test);

  TrainableModel model(model_path, a.is_set("verbose"));
  HyperParams hyper =
      resumed ? resumed_hyper_params(a, *resumed) : hyper_params_from(a, model.spec());
  return run_training(model, hyper, options, train_data, test_data);
}

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

  TrainableModel model(model_path, a.is_set("verbose"));
  model.load_weights(checkpoint);
  DatasetEvaluation e = evaluate_dataset(model, test, batch);
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
  TrainableModel model(model_path, a.is_set("verbose"));
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
