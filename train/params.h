/// \file
/// The ParameterStore: a model's trainable tensors, in the order they were
/// added, each a float32 value with a gradient buffer of the same shape and
/// the initialiser chosen for it.
///
/// Guarantees: names are unique and are identifiers ([A-Za-z_][A-Za-z0-9_.]*,
/// so they never contain '/', which checkpoints use for training state);
/// references to a Parameter stay valid while the store lives (adding more
/// parameters moves nothing); values and gradients are 64-byte aligned
/// (support/tensor.h) and allocated once, at add(); after pack_gradients()
/// the gradients are views of one flat buffer (what data_parallel.h
/// combines across processes in place).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "support/tensor.h"
#include "train/init.h"

namespace tenet::train {

struct Parameter {
  std::string name;
  Tensor value;  // float32
  Tensor grad;   // float32, same shape
  InitSpec init;
};

class ParameterStore {
 public:
  /// Adds a zero-filled parameter (and zero gradient). A BindError if the name
  /// is taken or is not an identifier, or a dimension is not positive.
  Parameter& add(const std::string& name, std::vector<int64_t> shape, InitSpec init);
  /// The same, parsing the initialiser text (InitError on bad text).
  Parameter& add(const std::string& name, std::vector<int64_t> shape, std::string_view init);

  size_t size() const { return params_.size(); }
  bool empty() const { return params_.empty(); }
  bool contains(std::string_view name) const { return find(name) != nullptr; }
  /// nullptr when absent.
  Parameter* find(std::string_view name);
  const Parameter* find(std::string_view name) const;
  /// A BindError naming the parameter when absent.
  Parameter& at(std::string_view name);
  const Parameter& at(std::string_view name) const;
  Parameter& operator[](size_t i) { return params_[i]; }
  const Parameter& operator[](size_t i) const { return params_[i]; }

  auto begin() { return params_.begin(); }
  auto end() { return params_.end(); }
  auto begin() const { return params_.begin(); }
  auto end() const { return params_.end(); }

  /// Moves every gradient (its values kept) into one flat float32 buffer,
  /// each starting on a 64-byte boundary, the gaps zero; call it once every
  /// parameter is added and before anything holds a gradient tensor (a
  /// std::logic_error when called twice or followed by add()).
  void pack_gradients();
  /// The flat buffer of every gradient (empty before pack_gradients()).
  Tensor& flat_gradient() { return flat_grad_; }

  /// Initialises every parameter with its own InitSpec from (seed, name).
  void initialize(uint64_t seed);
  /// Sets every gradient to zero.
  void zero_grad();
  /// "conv1.weight is nan at [3, 0, 1, 2]": the first gradient element that is
  /// not finite, or "" when every one is. Checked before each optimiser step:
  /// a NaN gradient with a finite loss (an operation that drops NaN, such as
  /// fmax, downstream of it) would otherwise make the parameters NaN.
  std::string first_non_finite_gradient() const;
  /// Total number of scalar parameters.
  int64_t numel() const;
  /// One describe_init() line per parameter, then a "total: N parameters" line.
  std::string describe() const;

 private:
  std::deque<Parameter> params_;
  Tensor flat_grad_;
};

}  // namespace tenet::train
