#include "train/named_tensors.h"

namespace tenet::train {

const Tensor* find_tensor(const NamedTensors& tensors, std::string_view name) {
  for (const NamedTensor& t : tensors)
    if (t.name == name) return &t.tensor;
  return nullptr;
}

}  // namespace tenet::train
