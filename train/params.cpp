#include "train/params.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "support/checked.h"
#include "support/error.h"
#include "train/named_tensors.h"

namespace tenet::train {
namespace {

bool is_identifier(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool later = (c >= '0' && c <= '9') || c == '.';
    if (!letter && !(i > 0 && later)) return false;
  }
  return true;
}

}  // namespace

Parameter& ParameterStore::add(const std::string& name, std::vector<int64_t> shape, InitSpec init) {
  if (!is_identifier(name))
    throw BindError("parameter name '" + name +
                    "' is not an identifier (letters, digits, '_' and '.', not starting with a "
                    "digit or '.')");
  if (contains(name)) throw BindError("parameter '" + name + "' is defined twice");
  for (int64_t d : shape)
    if (d <= 0)
      throw BindError("parameter '" + name + "' has a non-positive dimension " + std::to_string(d));
  if (flat_grad_.numel() > 0)
    throw std::logic_error("ParameterStore::add after pack_gradients: " + name);
  const std::string what = "parameter '" + name + "'";
  const int64_t bytes = check_tensor_bytes(what, ElemType::F32, shape);
  check_allocation(what + " of shape " + shape_text(shape), bytes);
  Tensor value(ElemType::F32, shape);
  Tensor grad(ElemType::F32, std::move(shape));
  params_.push_back(Parameter{name, std::move(value), std::move(grad), init});
  return params_.back();
}

void ParameterStore::pack_gradients() {
  if (flat_grad_.numel() > 0) throw std::logic_error("ParameterStore::pack_gradients twice");
  constexpr int64_t kAlign = 16;  // floats in 64 bytes
  int64_t total = 0;
  for (const Parameter& p : params_) total += (p.grad.numel() + kAlign - 1) / kAlign * kAlign;
  if (total == 0) return;
  flat_grad_ = Tensor(ElemType::F32, {total});
  int64_t offset = 0;
  for (Parameter& p : params_) {
    Tensor view = Tensor::alias(flat_grad_, offset, p.grad.shape());
    std::memcpy(view.raw(), p.grad.raw(), p.grad.nbytes());
    p.grad = view;
    offset += (p.grad.numel() + kAlign - 1) / kAlign * kAlign;
  }
}

Parameter& ParameterStore::add(const std::string& name, std::vector<int64_t> shape,
                               std::string_view init) {
  return add(name, std::move(shape), InitSpec::parse(init));
}

Parameter* ParameterStore::find(std::string_view name) {
  for (Parameter& p : params_)
    if (p.name == name) return &p;
  return nullptr;
}

const Parameter* ParameterStore::find(std::string_view name) const {
  return const_cast<ParameterStore*>(this)->find(name);
}

Parameter& ParameterStore::at(std::string_view name) {
  if (Parameter* p = find(name)) return *p;
  throw BindError("no parameter named '" + std::string(name) + "'");
}

const Parameter& ParameterStore::at(std::string_view name) const {
  return const_cast<ParameterStore*>(this)->at(name);
}

void ParameterStore::initialize(uint64_t seed) {
  for (Parameter& p : params_) train::initialize(p.value, p.init, seed, p.name);
}

void ParameterStore::zero_grad() {
  for (Parameter& p : params_) std::fill_n(p.grad.data<float>(), p.grad.numel(), 0.0f);
}

namespace {

/// Whether any float of `p` is NaN or infinite: its exponent bits all set.
/// An integer reduction, so it vectorises (and splits over threads) where a
/// loop on std::isfinite that stops early does not.
bool any_non_finite(const float* p, int64_t n) {
  uint32_t bad = 0;
#pragma omp parallel for simd reduction(| : bad) schedule(static) if (n >= (int64_t(1) << 16))
  for (int64_t k = 0; k < n; ++k) {
    uint32_t bits;
    std::memcpy(&bits, p + k, sizeof bits);
    bad |= uint32_t((bits & 0x7f800000u) == 0x7f800000u);
  }
  return bad != 0;
}

}  // namespace

std::string ParameterStore::first_non_finite_gradient() const {
  for (const Parameter& p : params_)
    if (any_non_finite(p.grad.data<float>(), p.grad.numel()))
      return p.name + " is " + first_non_finite(p.grad);
  return "";
}

int64_t ParameterStore::numel() const {
  int64_t n = 0;
  for (const Parameter& p : params_) n += p.value.numel();
  return n;
}

std::string ParameterStore::describe() const {
  std::ostringstream os;
  for (const Parameter& p : params_) os << describe_init(p.name, p.value.shape(), p.init) << "\n";
  os << "total: " << numel() << " parameters\n";
  return os.str();
}

}  // namespace tenet::train
