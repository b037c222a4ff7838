#include "support/tensor.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "runtime/tenet_runtime.h"
#include "support/checked.h"
#include "support/error.h"

namespace tenet {

void Tensor::FreeDeleter::operator()(void* p) const {
  std::free(p);
}

Tensor::Tensor(ElemType type, std::vector<int64_t> shape)
    : Tensor(unfilled(type, std::move(shape))) {
  std::memset(data_.get(), 0, size_t(nbytes()));
}

Tensor Tensor::unfilled(ElemType type, std::vector<int64_t> shape) {
  Tensor t;
  t.type_ = type;
  t.shape_ = std::move(shape);
  t.allocate();
  return t;
}

void Tensor::allocate() {
  // Callers that know the tensor's name check its size first; this is the
  // last line of defence, naming it by type and shape.
  const std::string what = "a tensor of " + std::string(type_name(type_));
  const int64_t nbytes = check_tensor_bytes(what, type_, shape_);
  numel_ = nbytes / byte_size(type_);
  // Rounded up to the alignment (at least one block), as aligned_alloc requires.
  const int64_t bytes = nbytes == 0 ? 64 : nbytes / 64 * 64 + (nbytes % 64 ? 64 : 0);
  check_allocation(what + " of shape " + shape_text(shape_), bytes);
  void* p = std::aligned_alloc(64, size_t(bytes));
  if (!p) allocation_failed(what + " of shape " + shape_text(shape_), bytes);
  data_ = std::shared_ptr<void>(p, FreeDeleter{});
}

double Tensor::get(int64_t i) const {
  switch (type_) {
    case ElemType::Bool:
      return data<bool>()[i] ? 1.0 : 0.0;
    case ElemType::I8:
      return data<int8_t>()[i];
    case ElemType::U8:
      return data<uint8_t>()[i];
    case ElemType::I16:
      return data<int16_t>()[i];
    case ElemType::I32:
      return data<int32_t>()[i];
    case ElemType::I64:
      return double(data<int64_t>()[i]);
    case ElemType::F32:
      return data<float>()[i];
    case ElemType::F64:
      return data<double>()[i];
    case ElemType::U16:
      return data<uint16_t>()[i];
    case ElemType::U32:
      return data<uint32_t>()[i];
    case ElemType::U64:
      return double(data<uint64_t>()[i]);
    case ElemType::F16:
      return half_to_float(data<uint16_t>()[i]);
  }
  return 0;
}

void Tensor::set(int64_t i, double v) {
  switch (type_) {
    case ElemType::Bool:
      data<bool>()[i] = v != 0;
      break;
    case ElemType::I8:
      data<int8_t>()[i] = int8_t(v);
      break;
    case ElemType::U8:
      data<uint8_t>()[i] = uint8_t(int64_t(v));
      break;
    case ElemType::I16:
      data<int16_t>()[i] = int16_t(v);
      break;
    case ElemType::I32:
      data<int32_t>()[i] = int32_t(v);
      break;
    case ElemType::I64:
      data<int64_t>()[i] = int64_t(v);
      break;
    case ElemType::F32:
      data<float>()[i] = float(v);
      break;
    case ElemType::F64:
      data<double>()[i] = v;
      break;
    case ElemType::U16:
      data<uint16_t>()[i] = uint16_t(int64_t(v));
      break;
    case ElemType::U32:
      data<uint32_t>()[i] = uint32_t(int64_t(v));
      break;
    case ElemType::U64:
      data<uint64_t>()[i] = v >= 18446744073709551616.0  ? ~uint64_t(0)  // saturates, as casts do
                            : v >= 9223372036854775808.0 ? uint64_t(v)
                                                         : uint64_t(int64_t(v));
      break;
    case ElemType::F16:  // through float: a double can round twice (rare, 1 half ulp at most)
      data<uint16_t>()[i] = float_to_half(float(v));
      break;
  }
}

Tensor Tensor::alias(const Tensor& base, int64_t offset, std::vector<int64_t> shape) {
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  if (offset < 0 || numel < 0 || offset > base.numel_ || numel > base.numel_ - offset)
    throw std::out_of_range("Tensor::alias: " + shape_text(shape) + " at " +
                            std::to_string(offset) + " does not fit in " + base.describe());
  Tensor t;
  t.type_ = base.type_;
  t.shape_ = std::move(shape);
  t.numel_ = numel;
  char* start = static_cast<char*>(base.data_.get()) + size_t(offset) * byte_size(base.type_);
  t.data_ = std::shared_ptr<void>(base.data_, start);
  return t;
}

Tensor Tensor::cast(ElemType to) const {
  Tensor out(to, shape_);
  for (int64_t i = 0; i < numel_; ++i) out.set(i, get(i));
  return out;
}

std::string TensorShape::describe() const {
  std::ostringstream os;
  os << type_name(type) << '[';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}

std::string Tensor::describe() const {
  return shape_only().describe();
}

namespace {
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace

Tensor random_tensor(ElemType type, std::vector<int64_t> shape, uint64_t seed, double lo, double hi,
                     int64_t int_hi) {
  Tensor t(type, std::move(shape));
  uint64_t state = seed * 0x2545F4914F6CDD1Dull + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint64_t r = splitmix64(state);
    if (is_float(type)) {
      double u = double(r >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
      t.set(i, lo + (hi - lo) * u);
    } else {
      t.set(i, double(int64_t(r % uint64_t(int_hi > 0 ? int_hi : 1))));
    }
  }
  return t;
}

Diff compare(const Tensor& a, const Tensor& b, double rel_floor) {
  TENET_ASSERT(a.shape() == b.shape(),
               "compare: shapes differ " << a.describe() << " vs " << b.describe());
  Diff d;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.get(i), y = b.get(i);
    double abs = std::fabs(x - y);
    if (std::isnan(x) != std::isnan(y)) abs = INFINITY;
    if (std::isnan(x) && std::isnan(y)) abs = 0;
    double rel = abs / std::max(std::fabs(y), rel_floor);
    if (abs > d.max_abs || (d.worst_index < 0 && abs >= d.max_abs)) d.worst_index = i;
    d.max_abs = std::max(d.max_abs, abs);
    d.max_rel = std::max(d.max_rel, rel);
  }
  return d;
}

}  // namespace tenet
