// A standalone model (model.h): parameters, the generated programs bound per
// batch size, and the optimiser.
#include "standalone/model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "support/error.h"
#include "train/checkpoint.h"
#include "train/init.h"
#include "train/rng.h"
#include "train/safetensors.h"
#include "train/team.h"

namespace tenet::standalone {

namespace {

std::vector<int64_t> concrete(const std::vector<int64_t>& shape, int64_t batch) {
  std::vector<int64_t> out = shape;
  for (int64_t& d : out)
    if (d == kBatch) d = batch;
  return out;
}

int find(const std::vector<BufferInfo>& buffers, Role role) {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].role == role) return int(i);
  return -1;
}

/// The row of a mask a shard's rows start at, as `tenet train` takes them:
/// `first_row`, or 0 when the mask does not depend on the batch; a BindError
/// when the batch is not its first dimension.
int64_t mask_first_row(const BufferInfo& mask, int64_t first_row) {
  if (first_row == 0) return 0;
  for (size_t d = 1; d < mask.shape.size(); ++d)
    if (mask.shape[d] == kBatch)
      throw BindError("dropout mask '" + mask.name +
                      "' has the batch size after its first dimension: its rows cannot be cut "
                      "into shards");
  return !mask.shape.empty() && mask.shape[0] == kBatch ? first_row : 0;
}

}  // namespace

Model::Model(const ModelInfo& info, uint64_t seed) : info_(info) {
  for (const ParamInfo& p : info_.params) params_.add(p.name, p.shape, p.init);
  params_.pack_gradients();  // one region, what data-parallel steps combine
  params_.initialize(seed);
  set_optimizer("sgd", 0.01, 0);
}

void Model::set_optimizer(const std::string& kind, double lr, double momentum) {
  if (kind == "sgd") {
    train::SgdOptions o;
    o.lr = lr;
    o.momentum = momentum;
    optimizer_ = std::make_unique<train::Sgd>(params_, o);
  } else if (kind == "adam") {
    train::AdamOptions o;
    o.lr = lr;
    optimizer_ = std::make_unique<train::Adam>(params_, o);
  } else {
    throw BindError("unknown optimizer '" + kind + "' (sgd or adam)");
  }
}

Model::Bound& Model::bound(const ProgramInfo& program, int64_t batch) {
  if (batch <= 0) throw BindError("the batch size must be positive, not " + std::to_string(batch));
  const auto key = std::make_pair(&program, batch);
  if (auto it = bound_.find(key); it != bound_.end()) return it->second;
  Bound b;
  // Buffers the model owns: masks (ones until train_step fills them: what
  // evaluation sees), labels of evaluation (zeros: only a loss reads them),
  // and outputs nobody supplies.
  const auto own = [&](const BufferInfo& info) {
    Tensor t(info.type, concrete(info.shape, batch));
    if (info.role == Role::Dropout) std::fill_n(t.data<float>(), t.numel(), 1.0f);
    b.buffers.push_back(t.raw());
    b.owned.push_back(t);
  };
  const auto external = [&](void* buffer) {  // a parameter's, or set per call (nullptr)
    b.buffers.push_back(buffer);
    b.owned.emplace_back();
  };
  for (const BufferInfo& in : program.inputs) {
    if (in.role == Role::Parameter)
      external(params_[size_t(in.param)].value.raw());
    else if (in.role == Role::Image || (in.role == Role::Label && &program == &info_.train))
      external(nullptr);
    else
      own(in);
  }
  for (const BufferInfo& out : program.outputs) {
    if (out.role == Role::Gradient)
      external(params_[size_t(out.param)].grad.raw());
    else if (out.role == Role::Scores && &program == &info_.eval)
      external(nullptr);  // the caller's
    else
      own(out);
  }
  const int64_t sizes[1] = {batch};
  const int64_t bytes = program.workspace_bytes(sizes);
  if (bytes < 0) throw BindError("batch size " + std::to_string(batch) + " is too large");
  const size_t rounded = (size_t(bytes) + 63) / 64 * 64;
  b.workspace = {static_cast<char*>(std::aligned_alloc(64, rounded ? rounded : 64)), std::free};
  if (!b.workspace) throw BindError("cannot allocate " + std::to_string(bytes) + " bytes");
  return bound_.emplace(key, std::move(b)).first->second;
}

void Model::run(const ProgramInfo& program, Bound& b, int64_t batch) {
  const int64_t sizes[1] = {batch};
  const int rc = program.run(sizes, b.buffers.data(), b.workspace.get());
  if (rc == 0) return;
  const char* why = rc == 3 && program.error ? program.error() : nullptr;
  throw BindError(program.name + " failed (status " + std::to_string(rc) + ")" +
                  (why ? std::string(": ") + why : std::string()));
}

void Model::set_shards(int64_t shards) {
  train::Team& team = train::Team::world();
  if (shards == 0) shards = team.size();
  parallel_ = std::make_unique<train::DataParallel>(team, params_, shards);
  for (train::Parameter& p : params_) team.broadcast(p.value.raw(), p.value.nbytes());
}

double Model::train_step(const float* images, const int32_t* labels, int64_t batch,
                         uint64_t dropout_key) {
  for (int64_t i = 0; i < batch; ++i)
    if (labels[i] < 0 || labels[i] >= info_.classes)
      throw BindError("label " + std::to_string(labels[i]) + " of example " + std::to_string(i) +
                      " is not a class 0.." + std::to_string(info_.classes - 1));
  double loss = 0;
  if (!parallel_) {
    loss = gradient(images, labels, batch, dropout_key, 0);
  } else {
    int64_t row = 1;  // floats per image
    for (int64_t d : info_.train.inputs[size_t(find(info_.train.inputs, Role::Image))].shape)
      if (d != kBatch) row *= d;
    auto shard = [&](int64_t, int64_t first, int64_t rows) {
      return train::ShardOutcome{
          gradient(images + first * row, labels + first, rows, dropout_key, first), 0};
    };
    loss = parallel_->step(batch, shard).loss;
  }
  if (!std::isfinite(loss))
    throw BindError("the loss is " + std::to_string(loss) + " at step " +
                    std::to_string(steps() + 1) + ": the parameters were not updated");
  if (const std::string bad = params_.first_non_finite_gradient(); !bad.empty())
    throw BindError("the gradient of " + bad + " at step " + std::to_string(steps() + 1) +
                    " (the loss, " + std::to_string(loss) +
                    ", does not show it: fmax and comparisons drop NaN): the parameters were "
                    "not updated");
  optimizer_->step();
  return loss;
}

double Model::gradient(const float* images, const int32_t* labels, int64_t batch,
                       uint64_t dropout_key, int64_t first_row) {
  const ProgramInfo& program = info_.train;
  Bound& b = bound(program, batch);
  for (size_t i = 0; i < program.inputs.size(); ++i) {
    const BufferInfo& in = program.inputs[i];
    if (in.role == Role::Image) b.buffers[i] = const_cast<float*>(images);
    if (in.role == Role::Label) b.buffers[i] = const_cast<int32_t*>(labels);
    if (in.role == Role::Dropout)
      train::fill_dropout_mask(b.owned[i], in.dropout_p, train::hash_key(dropout_key, in.name),
                               mask_first_row(in, first_row));
  }
  run(program, b, batch);
  const int loss_at = find(program.outputs, Role::Loss);
  return *static_cast<const float*>(b.buffers[program.inputs.size() + size_t(loss_at)]);
}

void Model::forward(const float* images, int64_t batch, float* scores) {
  const ProgramInfo& program = info_.eval;
  Bound& b = bound(program, batch);
  b.buffers[size_t(find(program.inputs, Role::Image))] = const_cast<float*>(images);
  b.buffers[program.inputs.size() + size_t(find(program.outputs, Role::Scores))] = scores;
  run(program, b, batch);
}

void Model::load(const std::string& path) {
  train::SafetensorsFile file = train::read_safetensors(path);
  if (file.metadata.count("tenet.format"))
    train::load_checkpoint(path, params_, nullptr);
  else
    train::load_weights(file, path, params_, info_.name);
}

void Model::save(const std::string& path) const {
  train::save_weights(path, params_);
}

}  // namespace tenet::standalone
