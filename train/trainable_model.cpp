// A model ready to train (trainable_model.h): directives, parameters, and the
// compiled gradient and evaluation programs.
#include "train/trainable_model.h"

#include "driver/target.h"

#include <cstdio>
#include <cstring>

#include "ad/grad.h"
#include "driver/front_end.h"
#include "ir/bind.h"
#include "support/error.h"
#include "train/metrics.h"
#include "train/rng.h"
#include "train/safetensors.h"

namespace tenet::train {

namespace {

constexpr size_t kGradient = 0, kEvaluation = 1;

}  // namespace

driver::Request training_request(const std::string& path, const ModelSpec& spec) {
  // The gradient of the loss with respect to every parameter (not the data
  // or the masks), and the evaluation function, optimised and compiled together.
  ad::GradRequest gradient;
  gradient.output = spec.train.loss;
  for (const ParamSpec& p : spec.params) gradient.wrt.push_back(p.input);
  driver::Request request;
  request.path = path;
  request.functions = {{spec.train.function, gradient}, {spec.eval.function, std::nullopt}};
  return request;
}

TrainableModel::TrainableModel(const std::string& path, bool verbose, const std::string& target)
    : path_(path), verbose_(verbose), target_(target) {
  driver::find_target(target);  // an unknown one, before any work
  driver::Request request;
  request.path = path;
  front_ = driver::front_end(request);
  file_ = front_.file;
  const ir::Module& module = *front_.checked;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(hash_key(0, file_->text())));
  fingerprint_ = hex;
  spec_ = parse_model_spec(*file_, module);
  for (const ParamSpec& p : spec_.params) params_.add(p.input, p.shape, p.init);
  params_.pack_gradients();  // one region, what data-parallel steps combine
}

CheckpointState TrainableModel::load_checkpoint(const std::string& path, Optimizer* optimizer) {
  try {
    return train::load_checkpoint(path, params_, optimizer);
  } catch (const BindError& e) {
    Metadata saved = read_safetensors(path).metadata;
    auto model = saved.find("model.path");
    if (model == saved.end() || model->second == path_) throw;
    throw BindError(std::string(e.what()) + " (it was saved by a run of " + model->second +
                    ", not of " + path_ + ")");
  }
}

void TrainableModel::load_weights(const std::string& path) {
  SafetensorsFile file = read_safetensors(path);
  if (file.metadata.count("tenet.format")) {
    load_checkpoint(path, nullptr);
    return;
  }
  train::load_weights(file, path, params_, path_);
}

void TrainableModel::compile() {
  if (!compiled_.empty()) return;
  driver::Request request = training_request(path_, spec_);
  request.target = target_;
  jit::JitOptions jit;
  jit.verbose = verbose_;
  compiled_ = driver::load(request, driver::compile(request, front_), jit);
}

size_t TrainableModel::output_index(const ir::Function& fn, const std::string& name) const {
  for (size_t i = 0; i < fn.output_names.size(); ++i)
    if (fn.output_names[i] == name) return i;
  TENET_UNREACHABLE("no output '" + name + "' in " + fn.name);
}

TrainableModel::Bound& TrainableModel::bound(size_t program, int64_t batch) {
  auto key = std::make_pair(program, batch);
  if (auto it = bound_.find(key); it != bound_.end()) return it->second;
  compile();
  const jit::CompiledFunction& f = compiled_[program];
  const ir::Function& fn = f.function();
  ir::SizeBindings sizes = {{spec_.batch_size, batch}};
  Bound b{jit::Executable(f, sizes),
          program_roles(spec_, fn, program == kGradient),
          {},
          {},
          Tensor(ElemType::I32, {batch})};
  for (size_t k = 0; k < fn.inputs.size(); ++k) {
    const BufferRole& in = b.roles.inputs[k];
    if (in.role == Role::Parameter) {
      b.inputs.push_back(params_[size_t(in.param)].value);
      continue;
    }
    // Data (set per call) and masks: ones, refilled per step when training.
    Tensor t = ir::allocate(*fn.inputs[k], sizes);
    if (in.role == Role::Dropout) std::fill_n(t.data<float>(), t.numel(), 1.0f);
    b.inputs.push_back(t);
  }
  for (size_t i = 0; i < fn.outputs.size(); ++i) {
    const BufferRole& out = b.roles.outputs[i];
    b.outputs.push_back(out.role == Role::Gradient ? params_[size_t(out.param)].grad
                                                   : ir::allocate(*fn.outputs[i], sizes));
  }
  return bound_.emplace(key, std::move(b)).first->second;
}

int64_t TrainableModel::mask_first_row(const ir::Value& input, int64_t first_row) const {
  if (first_row == 0) return 0;
  bool batch_first = false, batch_later = false;
  for (size_t d = 0; d < input.shape.size(); ++d)
    if (input.shape[d].as_symbol() == spec_.batch_size) (d == 0 ? batch_first : batch_later) = true;
  if (batch_later)
    throw BindError("dropout mask '" + input.name + "' has the batch size " + spec_.batch_size +
                    " after its first dimension: its rows cannot be cut into shards (--shards)");
  return batch_first ? first_row : 0;
}

void TrainableModel::set_batch(Bound& b, const Tensor& images, const Tensor& labels, bool training,
                               uint64_t dropout_key, int64_t first_row) {
  const ir::Function& fn = b.executable.function().function();
  for (size_t i = 0; i < fn.inputs.size(); ++i) {
    const BufferRole& in = b.roles.inputs[i];
    if (in.role == Role::Image) {
      b.inputs[i] = images;
    } else if (in.role == Role::Label) {
      // Without labels (prediction), zeros: only the loss reads them, and
      // prediction reports the scores.
      b.inputs[i] = labels.numel() > 0 ? labels : b.no_labels;
    } else if (in.role == Role::Dropout && training) {
      fill_dropout_mask(b.inputs[i], in.dropout_p, hash_key(dropout_key, fn.inputs[i]->name),
                        mask_first_row(*fn.inputs[i], first_row));
    }
  }
}

BatchResult TrainableModel::train_step(const Tensor& images, const Tensor& labels,
                                       uint64_t dropout_key, int64_t first_row) {
  const int64_t batch = images.shape().at(0);
  Bound& b = bound(kGradient, batch);
  set_batch(b, images, labels, true, dropout_key, first_row);
  b.executable.run_into(b.inputs, b.outputs);
  const ir::Function& fn = b.executable.function().function();
  BatchResult r;
  r.size = batch;
  r.loss = b.outputs[output_index(fn, spec_.train.loss)].get(0);
  if (!spec_.train.scores.empty())
    r.correct = count_correct(b.outputs[output_index(fn, spec_.train.scores)], labels);
  return r;
}

TrainableModel::Evaluation TrainableModel::evaluate(const Tensor& images, const Tensor& labels) {
  Bound& b = bound(kEvaluation, images.shape().at(0));
  set_batch(b, images, labels, false, 0, 0);
  b.executable.run_into(b.inputs, b.outputs);
  const ir::Function& fn = b.executable.function().function();
  Evaluation e;
  e.scores = b.outputs[output_index(fn, spec_.eval.scores)];
  if (eval_has_loss()) e.loss = b.outputs[output_index(fn, spec_.eval.loss)].get(0);
  return e;
}

}  // namespace tenet::train
