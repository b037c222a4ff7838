#include "train/named_tensors.h"

#include <cmath>
#include <cstdio>

namespace tenet::train {
namespace {

// "-0.5 at [1, 2]"
std::string value_at(const Tensor& t, int64_t flat) {
  char value[32];
  const double v = t.get(flat);
  std::snprintf(value, sizeof value, "%g", std::isnan(v) ? std::fabs(v) : v);  // not "-nan"
  std::string index;
  for (int d = t.rank() - 1; d >= 0; --d) {
    const int64_t extent = t.shape()[size_t(d)];
    index = std::to_string(flat % extent) + (index.empty() ? "" : ", ") + index;
    flat /= extent;
  }
  return std::string(value) + " at [" + index + "]";
}

}  // namespace

const Tensor* find_tensor(const NamedTensors& tensors, std::string_view name) {
  for (const NamedTensor& t : tensors)
    if (t.name == name) return &t.tensor;
  return nullptr;
}

std::string first_non_finite(const Tensor& t) {
  if (!is_float(t.type())) return "";
  if (t.type() == ElemType::F32) {  // parameters and optimiser state: millions of them
    const float* p = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i)
      if (!std::isfinite(p[i])) return value_at(t, i);
    return "";
  }
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!std::isfinite(t.get(i))) return value_at(t, i);
  return "";
}

std::string first_negative(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (t.get(i) < 0) return value_at(t, i);
  return "";
}

}  // namespace tenet::train
