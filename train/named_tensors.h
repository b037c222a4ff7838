/// \file
/// Named tensors: what safetensors files, checkpoints and optimiser state
/// exchange. Order is meaningful (it is the order of writing).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "support/tensor.h"

namespace tenet::train {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};
using NamedTensors = std::vector<NamedTensor>;

/// The tensor of that name, or nullptr.
const Tensor* find_tensor(const NamedTensors& tensors, std::string_view name);

}  // namespace tenet::train
