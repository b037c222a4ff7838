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

/// Where a float tensor first holds a value that is not finite, as "nan at
/// [2, 1]" ("inf at []" for a scalar); empty when there is none (and for
/// integer tensors). What checkpoints check before saving and after loading.
std::string first_non_finite(const Tensor& t);
/// Where a tensor first holds a negative value, as "-0.5 at [3]"; empty when none.
std::string first_negative(const Tensor& t);

}  // namespace tenet::train
