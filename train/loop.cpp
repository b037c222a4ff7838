// The training loop (loop.h): epochs, steps, evaluation, the CSV log and
// checkpoints, with exact resumption.
#include "train/loop.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "support/child_processes.h"
#include "support/error.h"
#include "support/temp_files.h"
#include "train/checkpoint.h"
#include "train/data_parallel.h"
#include "train/metrics.h"
#include "train/optimizer.h"
#include "train/rng.h"
#include "train/run_dir.h"
#include "train/team.h"

namespace tenet::train {

namespace fs = std::filesystem;

namespace {

/// Doubles as text that reads back to the same value.
std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// "0.001", "2e-05": for messages.
std::string short_number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// printf into a string.
[[gnu::format(printf, 1, 2)]] std::string format(const char* pattern, ...) {
  va_list args;
  va_start(args, pattern);
  char buf[512];
  int n = std::vsnprintf(buf, sizeof buf, pattern, args);
  va_end(args);
  if (n < int(sizeof buf)) return buf;
  std::string out(size_t(n) + 1, '\0');
  va_start(args, pattern);
  std::vsnprintf(out.data(), out.size(), pattern, args);
  va_end(args);
  out.resize(size_t(n));
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Sums behind a mean loss and an accuracy, kept in checkpoints so a resumed
/// run logs what the uninterrupted one would.
struct Tally {
  double loss_sum = 0;  // sum of batch mean loss x batch size
  int64_t correct = 0;
  int64_t images = 0;

  void add(const BatchResult& r) {
    loss_sum += r.loss * double(r.size);
    correct += r.correct;
    images += r.size;
  }
  double loss() const { return images > 0 ? loss_sum / double(images) : 0.0; }
  double accuracy() const { return images > 0 ? double(correct) / double(images) : 0.0; }

  void save(Metadata& m, const std::string& prefix) const {
    m[prefix + ".loss_sum"] = exact(loss_sum);
    m[prefix + ".correct"] = std::to_string(correct);
    m[prefix + ".images"] = std::to_string(images);
  }
  static Tally load(const Metadata& m, const std::string& prefix, const std::string& source) {
    Tally t;
    try {
      t.loss_sum = std::stod(m.at(prefix + ".loss_sum"));
      t.correct = std::stoll(m.at(prefix + ".correct"));
      t.images = std::stoll(m.at(prefix + ".images"));
      // The sums of finite losses of images seen: anything else is no tally.
      if (!std::isfinite(t.loss_sum) || t.correct < 0 || t.images < t.correct)
        throw std::out_of_range(prefix);
    } catch (const std::exception&) {
      throw BindError(source + ": checkpoint metadata '" + prefix +
                      ".*' is missing or malformed: not a checkpoint of `tenet train`");
    }
    return t;
  }
};

std::unique_ptr<Optimizer> make_optimizer(ParameterStore& params, const HyperParams& h) {
  if (h.optimizer == "adam") {
    AdamOptions o;
    o.lr = h.lr;
    o.weight_decay = h.weight_decay;
    return std::make_unique<Adam>(params, o);
  }
  if (h.optimizer == "adadelta") {
    AdadeltaOptions o;
    o.lr = h.lr;
    o.weight_decay = h.weight_decay;
    return std::make_unique<Adadelta>(params, o);
  }
  SgdOptions o;
  o.lr = h.lr;
  o.momentum = h.momentum;
  o.nesterov = h.nesterov;
  o.weight_decay = h.weight_decay;
  return std::make_unique<Sgd>(params, o);
}

/// What the ranks other than 0 of a data-parallel run report: nothing.
class SilentReporter final : public TrainingReporter {
 public:
  void line(const std::string&) override {}
  void warning(const std::string&) override {}
  void epoch_begins(const std::string&, int64_t, int64_t) override {}
  void step_done(int64_t, int64_t, double, double) override {}
  void epoch_ends() override {}
};

class Trainer {
 public:
  Trainer(TrainableModel& model, const HyperParams& hyper, const RunOptions& options,
          const MnistDataset& train_data, const MnistDataset& test_data, TrainingReporter& reporter)
      : model_(model),
        hyper_(hyper),
        options_(options),
        train_data_(train_data),
        test_data_(test_data),
        reporter_(team_.leader() ? reporter : silent_) {
    if (hyper_.shards == 0) hyper_.shards = team_.size();  // one per process
  }

  TrainingResult run() {
    start();
    start_ = std::chrono::steady_clock::now();
    for (; epoch_ < hyper_.epochs; ++epoch_) {
      train_epoch();
      team_.leader_does([&] {
        evaluate_epoch();
        save(epoch_ + 1);
      });
    }
    reporter_.line(format("done: %lld steps; checkpoint %s", static_cast<long long>(step_),
                          checkpoint_path().c_str()));
    result_.steps = step_;
    result_.epochs = epoch_;
    result_.checkpoint = checkpoint_path();
    return result_;
  }

 private:
  /// Everything before the first step, on every rank of the team: rank 0
  /// alone writes the run directory and reads a checkpoint, then shares the
  /// state it starts from.
  void start() {
    BatchOptions b;
    b.batch_size = hyper_.batch;
    b.seed = hyper_.seed;
    b.shuffle = true;
    b.max_shift = int(hyper_.shift);
    batcher_ = std::make_unique<Batcher>(train_data_, b);
    optimizer_ = make_optimizer(model_.params(), hyper_);
    schedule_ = {hyper_.lr, hyper_.lr_decay, hyper_.lr_decay_every, hyper_.lr_decay_staircase};
    schedule_.validate();
    parallel_ = std::make_unique<DataParallel>(team_, model_.params(), hyper_.shards,
                                               options_.spell("shards"));
    check_team_agrees();
    team_.leader_does([&] { create_run_dir(); });
    model_.params().initialize(hyper_.seed);
    team_.leader_does([&] {
      if (options_.resume.empty())
        copy_model_file();
      else
        resume();
    });
    share_state();
    report_setup();
    team_.leader_does([&] { model_.compile(); });  // the others find it in the cache
    model_.compile();
    team_.leader_does(
        [&] { log_ = std::make_unique<CurveLog>(options_.run_dir + "/log.csv", step_, epoch_); });
  }

  void copy_model_file() const {
    std::error_code ec;
    fs::copy_file(model_.path(), options_.run_dir + "/model.tn",
                  fs::copy_options::overwrite_existing, ec);
    if (ec)
      throw BindError("cannot write " + options_.run_dir + "/model.tn: " + ec.message() +
                      "; choose another " + options_.spell("out"));
  }

  /// What must be equal on every rank for their steps to make one run.
  void check_team_agrees() const {
    if (team_.size() == 1) return;
    std::vector<std::pair<std::string, std::string>> facts = {
        {"model file " + model_.path(), model_.fingerprint()},
        {"code target", model_.target()},
        {"training data in " + options_.data_dir, dataset_digest(train_data_)},
        {"test data in " + options_.data_dir, dataset_digest(test_data_)}};
    for (const auto& [key, value] : hyper_.to_map()) facts.push_back({"value of " + key, value});
    team_.agree(facts);
  }

  /// Rank 0's parameters, optimiser state and position in the run, on every rank.
  void share_state() {
    if (team_.size() == 1) return;
    for (Parameter& p : model_.params()) team_.broadcast(p.value.raw(), p.value.nbytes());
    NamedTensors state = optimizer_->state();
    for (NamedTensor& t : state) team_.broadcast(t.tensor.raw(), t.tensor.nbytes());
    if (!team_.leader()) optimizer_->load_state(state, "rank 0's optimiser state");
    int64_t position[3] = {step_, epoch_, first_batch_};
    team_.broadcast(position, sizeof position);
    step_ = position[0];
    epoch_ = position[1];
    first_batch_ = position[2];
  }

  std::string checkpoint_path() const { return options_.run_dir + "/last.safetensors"; }

  /// The run directory, created if need be, without checkpoint temporaries
  /// that killed runs left in it.
  void create_run_dir() {
    std::error_code ec;
    fs::create_directories(options_.run_dir, ec);
    if (ec || !fs::is_directory(options_.run_dir))
      throw BindError("cannot create the run directory " + options_.run_dir + ": " +
                      (ec ? ec.message() : "a file of that name exists") + "; choose another " +
                      options_.spell("out"));
    if (::access(options_.run_dir.c_str(), W_OK) != 0)
      throw BindError("cannot write in the run directory " + options_.run_dir +
                      "; choose another " + options_.spell("out"));
    lock_.take(options_.run_dir, options_.spell("out"));
    remove_stale_temporaries(checkpoint_path());
  }

  void resume() {
    CheckpointState s = model_.load_checkpoint(options_.resume, optimizer_.get());
    const int64_t per_epoch = batcher_->batches_per_epoch();
    // step in [epoch * per_epoch, (epoch + 1) * per_epoch], without overflow
    // for an epoch a malformed file makes huge (step and epoch are >= 0).
    const int64_t whole = s.step / per_epoch, rest = s.step % per_epoch;
    if (s.step != optimizer_->step_count() ||
        !(s.epoch == whole || (rest == 0 && s.epoch + 1 == whole)))
      throw BindError(options_.resume + ": checkpoint at step " + std::to_string(s.step) +
                      ", epoch " + std::to_string(s.epoch) + " does not fit " +
                      std::to_string(per_epoch) + " batches per epoch");
    step_ = s.step;
    epoch_ = s.epoch;
    first_batch_ = s.step - s.epoch * per_epoch;
    interval_ = Tally::load(s.metadata, "progress.interval", options_.resume);
    epoch_tally_ = Tally::load(s.metadata, "progress.epoch", options_.resume);
    auto model_print = s.metadata.find("model.fingerprint");
    if (model_print != s.metadata.end() && model_print->second != model_.fingerprint())
      reporter_.warning(options_.resume + " was saved from another version of " + model_.path());
    reporter_.line(format("resuming from %s: epoch %lld, step %lld", options_.resume.c_str(),
                          static_cast<long long>(epoch_ + 1), static_cast<long long>(step_)));
  }

  /// Everything that decides the result: model, parameters, data, optimiser, schedule.
  void report_setup() const {
    const ModelSpec& spec = model_.spec();
    reporter_.line(format("model %s: train %s (loss %s), evaluate %s (scores %s)",
                          model_.path().c_str(), spec.train.function.c_str(),
                          spec.train.loss.c_str(), spec.eval.function.c_str(),
                          spec.eval.scores.c_str()));
    reporter_.line(format("parameters (initialiser, seed %llu):",
                          static_cast<unsigned long long>(hyper_.seed)));
    std::istringstream described(model_.params().describe());
    for (std::string line; std::getline(described, line);) reporter_.line(line);
    for (const DropoutSpec& d : spec.dropouts)
      reporter_.line(format("dropout %s p=%g", d.input.c_str(), d.p));
    reporter_.line(format("data %s: %lld training images, %lld test images",
                          options_.data_dir.c_str(), static_cast<long long>(train_data_.size()),
                          static_cast<long long>(test_data_.size())));
    std::string schedule =
        hyper_.lr_decay == 1.0 ? short_number(hyper_.lr) + " (constant)" : schedule_.describe();
    reporter_.line("optimizer " + optimizer_->describe() + ", lr " + schedule);
    reporter_.line(format(
        "batch %lld (%lld steps per epoch), %lld epochs, shift %lld pixels",
        static_cast<long long>(hyper_.batch), static_cast<long long>(batcher_->batches_per_epoch()),
        static_cast<long long>(hyper_.epochs), static_cast<long long>(hyper_.shift)));
    if (hyper_.shards > 1)
      reporter_.line(
          format("data parallel: %lld shards per batch (%lld examples each), %d "
                 "processes; the same bits with any number of processes dividing "
                 "%lld",
                 static_cast<long long>(hyper_.shards),
                 static_cast<long long>(hyper_.batch / hyper_.shards), team_.size(),
                 static_cast<long long>(hyper_.shards)));
    std::string every = options_.checkpoint_every > 0
                            ? "every " + std::to_string(options_.checkpoint_every) + " steps and "
                            : "";
    reporter_.line("run directory " + options_.run_dir + ": log.csv, last.safetensors (" + every +
                   "each epoch)");
  }

  /// One epoch of steps.
  void train_epoch() {
    const int64_t per_epoch = batcher_->batches_per_epoch();
    batcher_->start_epoch(epoch_, first_batch_);
    const int64_t resumed_at = first_batch_;
    first_batch_ = 0;
    reporter_.epoch_begins(
        "epoch " + std::to_string(epoch_ + 1) + "/" + std::to_string(hyper_.epochs), per_epoch,
        resumed_at);
    auto interval_start = std::chrono::steady_clock::now();
    int64_t images_this_run = 0;
    Batch batch;
    while (batcher_->next(batch)) {
      check_interrupt();
      const double lr = schedule_.lr_at(step_);
      optimizer_->set_lr(lr);
      const BatchResult r = step(batch);
      const std::string bad_gradient =
          std::isfinite(r.loss) ? model_.params().first_non_finite_gradient() : "";
      if (!std::isfinite(r.loss) || !bad_gradient.empty()) {
        reporter_.epoch_ends();
        throw_non_finite(r.loss, bad_gradient, batch.index);
      }
      optimizer_->step();
      ++step_;
      interval_.add(r);
      epoch_tally_.add(r);
      images_this_run += r.size;
      reporter_.step_done(batch.index + 1, images_this_run, epoch_tally_.loss(),
                          epoch_tally_.accuracy());
      if (step_ % options_.log_every == 0) {
        log_interval(lr, seconds_since(interval_start));
        interval_start = std::chrono::steady_clock::now();
      }
      // The last step's checkpoint is the end-of-epoch one, after evaluation.
      if (options_.checkpoint_every > 0 && step_ % options_.checkpoint_every == 0 &&
          batch.index + 1 < per_epoch)
        team_.leader_does([&] { save(epoch_); });
    }
    reporter_.epoch_ends();
  }

  /// Forward and backward on the batch, shard by shard (data_parallel.h):
  /// the batch's gradient in the parameters' gradients on every rank.
  BatchResult step(const Batch& batch) {
    const uint64_t key = dropout_key(hyper_.seed, epoch_, batch.index);
    auto shard = [&](int64_t, int64_t first, int64_t rows) {
      BatchResult r;
      if (rows == batch.size) {
        r = model_.train_step(*batch.images, *batch.labels, key);
      } else {
        copy_rows(*batch.images, first, rows, shard_images_);
        copy_rows(*batch.labels, first, rows, shard_labels_);
        r = model_.train_step(shard_images_, shard_labels_, key, first);
      }
      return ShardOutcome{r.loss, r.correct};
    };
    const ShardOutcome o = parallel_->step(batch.size, shard);
    BatchResult r;
    r.loss = o.loss;
    r.correct = o.correct;
    r.size = batch.size;
    return r;
  }

  /// The step is not taken: the parameters stay finite, and so does the
  /// last checkpoint. Every rank sees the same combined values, so every
  /// rank stops here alike (a TeamError).
  [[noreturn]] void throw_non_finite(double loss, const std::string& bad_gradient,
                                     int64_t batch_index) const {
    const std::string what =
        bad_gradient.empty()
            ? format("the loss is %g", loss)
            : format(
                  "the loss is %g but the gradient of %s (a NaN or infinity the loss does "
                  "not show: fmax and comparisons drop NaN)",
                  loss, bad_gradient.c_str());
    throw TeamError(
        format("%s at step %lld (epoch %lld, batch %lld), so the parameters were not "
               "updated; try a lower learning rate (%s)",
               what.c_str(), static_cast<long long>(step_ + 1), static_cast<long long>(epoch_ + 1),
               static_cast<long long>(batch_index + 1), options_.spell("lr").c_str()));
  }

  /// A "train" row of the log for the steps since the last one.
  void log_interval(double lr, double seconds) {
    if (!log_) return;  // not rank 0
    log_->row(epoch_ + 1, step_, "train", interval_.loss(), interval_.accuracy(), lr,
              seconds > 0 ? double(interval_.images) / seconds : 0.0, seconds_since(start_));
    interval_ = Tally{};
  }

  void evaluate_epoch() {
    DatasetEvaluation e = evaluate_dataset(model_, test_data_, hyper_.batch);
    reporter_.line(
        format("epoch %lld/%lld: train loss %.4f acc %.2f%% | test loss %.4f acc %.2f%% "
               "(%lld/%lld, %.1fs)",
               static_cast<long long>(epoch_ + 1), static_cast<long long>(hyper_.epochs),
               epoch_tally_.loss(), 100.0 * epoch_tally_.accuracy(), e.loss, 100.0 * e.accuracy(),
               static_cast<long long>(e.correct), static_cast<long long>(e.total), e.seconds));
    result_.test_loss = e.loss;
    result_.test_accuracy = e.accuracy();
    log_->row(epoch_ + 1, step_, "test", e.loss, e.accuracy(), optimizer_->lr(),
              e.seconds > 0 ? double(e.total) / e.seconds : 0.0, seconds_since(start_));
    epoch_tally_ = Tally{};
  }

  /// A checkpoint with `epoch` as the epoch to continue with. A step with a
  /// finite loss can still make the parameters NaN (an infinite gradient):
  /// such a state stops the run instead of replacing the last good checkpoint.
  void save(int64_t epoch) {
    if (std::string problem = invalid_state(model_.params(), optimizer_.get()); !problem.empty())
      throw BindError("training diverged by step " + std::to_string(step_) + ": " + problem +
                      "; no checkpoint written (" + checkpoint_path() +
                      " is left as it was); try a lower learning rate (" + options_.spell("lr") +
                      ")");
    CheckpointState s;
    s.step = step_;
    s.epoch = epoch;
    s.metadata = hyper_.to_map();
    s.metadata["model.path"] = model_.path();
    s.metadata["model.fingerprint"] = model_.fingerprint();
    s.metadata["data"] = options_.data_dir;
    s.metadata["run.checkpoint_every"] = std::to_string(options_.checkpoint_every);
    s.metadata["run.log_every"] = std::to_string(options_.log_every);
    interval_.save(s.metadata, "progress.interval");
    epoch_tally_.save(s.metadata, "progress.epoch");
    save_checkpoint(checkpoint_path(), model_.params(), optimizer_.get(), s);
    reporter_.line(format("checkpoint: step %lld -> %s", static_cast<long long>(step_),
                          checkpoint_path().c_str()));
  }

  Team& team_ = Team::world();
  TrainableModel& model_;
  HyperParams hyper_;
  RunOptions options_;
  const MnistDataset& train_data_;
  const MnistDataset& test_data_;
  std::unique_ptr<Batcher> batcher_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<DataParallel> parallel_;
  Tensor shard_images_, shard_labels_;  // a shard's rows, when a batch has several
  ExponentialDecay schedule_;
  std::unique_ptr<CurveLog> log_;
  RunDirLock lock_;
  std::chrono::steady_clock::time_point start_;
  SilentReporter silent_;
  TrainingReporter& reporter_;
  TrainingResult result_;
  int64_t step_ = 0, epoch_ = 0, first_batch_ = 0;
  Tally interval_, epoch_tally_;
};

}  // namespace

DatasetEvaluation evaluate_dataset(TrainableModel& model, const MnistDataset& data, int64_t batch) {
  auto start = std::chrono::steady_clock::now();
  BatchOptions options;
  options.batch_size = batch;
  Batcher batcher(data, options);
  batcher.start_epoch(0);
  DatasetEvaluation e;
  double loss_sum = 0;
  Batch b;
  while (batcher.next(b)) {
    TrainableModel::Evaluation r = model.evaluate(*b.images, *b.labels);
    loss_sum += r.loss * double(b.size);
    e.correct += count_correct(r.scores, *b.labels);
    e.total += b.size;
  }
  e.loss = e.total > 0 ? loss_sum / double(e.total) : 0.0;
  e.seconds = seconds_since(start);
  return e;
}

TrainingResult run_training(TrainableModel& model, const HyperParams& hyper,
                            const RunOptions& options, const MnistDataset& train_data,
                            const MnistDataset& test_data, TrainingReporter& reporter) {
  return Trainer(model, hyper, options, train_data, test_data, reporter).run();
}

std::string default_data_dir() {
  if (const char* dir = std::getenv("TENET_DATA_DIR")) return dir;
  return TENET_SAMPLE_DATA_DIR;
}

std::string default_run_dir(const std::string& model_path) {
  return "runs/" + fs::path(model_path).stem().string();
}

const std::vector<std::string>& run_files() {
  static const std::vector<std::string> files = {"last.safetensors", "log.csv", "model.tn"};
  return files;
}

RunDirConflict run_dir_conflict(const RunOptions& options) {
  std::error_code ec;
  if (!options.resume.empty()) {
    fs::path checkpoint_dir = fs::path(options.resume).parent_path();
    if (checkpoint_dir.empty()) checkpoint_dir = ".";
    if (fs::equivalent(options.run_dir, checkpoint_dir, ec)) return {};  // its own folder
  }
  if (fs::exists(options.run_dir + "/last.safetensors", ec))
    return {options.run_dir + " already holds a run (last.safetensors)", true};
  std::string existing;
  for (const std::string& name : run_files())
    if (fs::exists(fs::path(options.run_dir) / name, ec))
      existing += (existing.empty() ? "" : " and ") + name;
  if (existing.empty()) return {};
  return {options.run_dir + " already holds " + existing + ", which the run would overwrite",
          false};
}

}  // namespace tenet::train
