#include "train/checkpoint.h"

#include <cstring>
#include <set>

#include "support/error.h"

namespace tenet::train {
namespace {

constexpr const char* kFormat = "tenet-checkpoint-1";
constexpr const char* kOptimizerPrefix = "optimizer/";

/// The bits of `from` as a `To` (std::bit_cast: standalone projects build this file as C++17).
template <typename To, typename From>
To bits_as(const From& from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

Tensor int64_scalar(int64_t v) {
  Tensor t(ElemType::I64, {});
  t.data<int64_t>()[0] = v;
  return t;
}

Tensor rng_tensor(const Rng::Snapshot& s) {
  Tensor t(ElemType::I64, {6});
  int64_t* p = t.data<int64_t>();
  for (size_t i = 0; i < 4; ++i) p[i] = bits_as<int64_t>(s.words[i]);
  p[4] = s.has_spare ? 1 : 0;
  p[5] = bits_as<int64_t>(s.spare);
  return t;
}

class CheckpointReader {
 public:
  CheckpointReader(const std::string& path, SafetensorsFile file)
      : path_(path), file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw BindError(path_ + ": checkpoint: " + what);
  }

  const Tensor& require(const std::string& name) const {
    const Tensor* t = find_tensor(file_.tensors, name);
    if (!t) fail("missing tensor '" + name + "'");
    return *t;
  }

  int64_t count(const std::string& name) const {
    const Tensor& t = require(name);
    if (t.type() != ElemType::I64 || t.numel() != 1 || t.rank() > 1)
      fail("'" + name + "' must be an int64 scalar, found " + t.describe());
    const int64_t n = t.data<int64_t>()[0];
    if (n < 0) fail("'" + name + "' is negative (" + std::to_string(n) + ")");
    return n;
  }

  Rng::Snapshot rng() const {
    const Tensor& t = require("train/rng");
    if (t.type() != ElemType::I64 || t.shape() != std::vector<int64_t>{6})
      fail("'train/rng' must be int64[6], found " + t.describe());
    const int64_t* p = t.data<int64_t>();
    if (p[4] != 0 && p[4] != 1) fail("'train/rng' has an invalid spare flag");
    Rng::Snapshot s;
    for (size_t i = 0; i < 4; ++i) s.words[i] = bits_as<uint64_t>(p[i]);
    s.has_spare = p[4] == 1;
    s.spare = bits_as<double>(p[5]);
    return s;
  }

  void check_format() const {
    const auto it = file_.metadata.find("tenet.format");
    if (it == file_.metadata.end())
      fail(
          "no 'tenet.format' metadata: not a Tenet checkpoint (load weights-only files with "
          "read_safetensors)");
    if (it->second != kFormat)
      fail("format '" + it->second + "' is not the supported '" + kFormat + "'");
  }

  // Every tensor is a parameter, optimiser state or train/*; each parameter
  // is present with its shape.
  void check_parameters(const ParameterStore& params) const {
    for (const NamedTensor& t : file_.tensors) {
      if (starts_with(t.name, kOptimizerPrefix) || t.name == "train/step" ||
          t.name == "train/epoch" || t.name == "train/rng")
        continue;
      if (!params.contains(t.name))
        fail("tensor '" + printable(t.name) + "' is not a parameter of the model");
    }
    for (const Parameter& p : params) {
      const Tensor& t = require(p.name);
      if (t.type() != ElemType::F32 || t.shape() != p.value.shape())
        fail("parameter '" + p.name + "' is " + t.describe() + " in the file but " +
             p.value.describe() + " in the model");
      if (std::string bad = first_non_finite(t); !bad.empty())
        fail("parameter '" + p.name + "' holds " + bad + ": the run that saved it diverged");
    }
  }

  NamedTensors optimizer_state(const Optimizer& optimizer) const {
    const auto it = file_.metadata.find("tenet.optimizer");
    if (it == file_.metadata.end()) fail("it holds no optimiser state");
    if (it->second != optimizer.kind())
      fail("it holds state for a '" + it->second + "' optimiser, not '" + optimizer.kind() + "'");
    NamedTensors state;
    for (const NamedTensor& t : file_.tensors)
      if (starts_with(t.name, kOptimizerPrefix))
        state.push_back({t.name.substr(std::strlen(kOptimizerPrefix)), t.tensor});
    return state;
  }

  const SafetensorsFile& file() const { return file_; }

 private:
  std::string path_;
  SafetensorsFile file_;
};

}  // namespace

std::string invalid_state(const ParameterStore& params, const Optimizer* optimizer) {
  for (const Parameter& p : params)
    if (std::string bad = first_non_finite(p.value); !bad.empty())
      return "parameter '" + p.name + "' holds " + bad;
  if (optimizer)
    if (std::string problem = optimizer->state_problem(optimizer->state()); !problem.empty())
      return optimizer->kind() + " optimiser state: " + problem;
  return "";
}

void save_checkpoint(const std::string& path, const ParameterStore& params,
                     const Optimizer* optimizer, const CheckpointState& state) {
  if (std::string problem = invalid_state(params, optimizer); !problem.empty())
    throw BindError(path + ": checkpoint not written (the file keeps what it held): " + problem);
  if (state.step < 0 || state.epoch < 0)
    throw BindError(path + ": checkpoint not written: negative step or epoch");
  Metadata metadata = state.metadata;
  for (const auto& [key, value] : metadata)
    if (starts_with(key, "tenet."))
      throw BindError(path + ": checkpoint metadata key '" + printable(key) +
                      "' is reserved (keys starting with 'tenet.')");
  metadata["tenet.format"] = kFormat;
  NamedTensors tensors;
  for (const Parameter& p : params) tensors.push_back({p.name, p.value});
  if (optimizer) {
    metadata["tenet.optimizer"] = optimizer->kind();
    for (NamedTensor& t : optimizer->state())
      tensors.push_back({kOptimizerPrefix + t.name, std::move(t.tensor)});
  }
  tensors.push_back({"train/step", int64_scalar(state.step)});
  tensors.push_back({"train/epoch", int64_scalar(state.epoch)});
  tensors.push_back({"train/rng", rng_tensor(state.rng)});
  write_safetensors(path, tensors, metadata);
}

CheckpointState load_checkpoint(const std::string& path, ParameterStore& params,
                                Optimizer* optimizer) {
  const CheckpointReader reader(path, read_safetensors(path));
  reader.check_format();
  reader.check_parameters(params);
  CheckpointState state;
  state.step = reader.count("train/step");
  state.epoch = reader.count("train/epoch");
  state.rng = reader.rng();
  for (const auto& [key, value] : reader.file().metadata)
    if (!starts_with(key, "tenet.")) state.metadata.emplace(key, value);
  // All checks are done before anything changes: the optimiser validates its
  // whole state before copying it, and parameters are copied last.
  if (optimizer) optimizer->load_state(reader.optimizer_state(*optimizer), path);
  for (Parameter& p : params) {
    const Tensor& t = reader.require(p.name);
    std::memcpy(p.value.raw(), t.raw(), t.nbytes());
  }
  return state;
}

void load_weights(const SafetensorsFile& file, const std::string& path, ParameterStore& params,
                  const std::string& model) {
  for (const NamedTensor& t : file.tensors)
    if (!params.contains(t.name))
      throw BindError(path + ": tensor '" + printable(t.name) + "' is not a parameter of " + model);
  for (const Parameter& p : params) {
    const Tensor* t = find_tensor(file.tensors, p.name);
    if (!t) throw BindError(path + ": no tensor '" + p.name + "' (a parameter of " + model + ")");
    if (t->type() != ElemType::F32 || t->numel() != p.value.numel())
      throw BindError(path + ": '" + p.name + "' is " + t->describe() + " but " + model +
                      " needs " + p.value.describe());
  }
  for (Parameter& p : params) {
    const Tensor* t = find_tensor(file.tensors, p.name);
    std::memcpy(p.value.raw(), t->raw(), t->nbytes());
  }
}

void save_weights(const std::string& path, const ParameterStore& params) {
  NamedTensors tensors;
  for (const Parameter& p : params) tensors.push_back({p.name, p.value});
  write_safetensors(path, tensors, {{"format", "pt"}});
}

}  // namespace tenet::train
