/// \file
/// A dense, row-major, 64-byte-aligned host tensor: what the interpreter, the
/// JIT and the CLI pass around. Values are read and written as double through
/// get/set (convenient for tests and the interpreter) or through typed pointers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/types.h"

namespace tenet {

/// What a tensor is without its elements: element type and shape (a buffer
/// elsewhere, e.g. in a device's memory, described for binding).
struct TensorShape {
  ElemType type = ElemType::F32;
  std::vector<int64_t> shape;
  int rank() const { return int(shape.size()); }
  /// "float32[2, 3]"
  std::string describe() const;
};

class Tensor {
 public:
  Tensor() = default;
  Tensor(ElemType type, std::vector<int64_t> shape);  // zero-filled
  /// A tensor whose elements are not set: for a buffer that a compiled
  /// function's call writes whole (an output), where zeroing it first would
  /// cost a pass over its memory.
  static Tensor unfilled(ElemType type, std::vector<int64_t> shape);

  ElemType type() const { return type_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int rank() const { return int(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return size_t(numel_) * byte_size(type_); }

  void* raw() { return data_.get(); }
  const void* raw() const { return data_.get(); }
  template <typename T>
  T* data() {
    return static_cast<T*>(raw());
  }
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(raw());
  }

  /// Element at a flat row-major offset, converted to/from double.
  double get(int64_t flat) const;
  void set(int64_t flat, double v);

  /// A tensor of `shape` over `base`'s storage from element `offset` on (the
  /// same element type): writes through either show in both, and it keeps
  /// the storage alive. std::out_of_range when it does not fit in `base`.
  static Tensor alias(const Tensor& base, int64_t offset, std::vector<int64_t> shape);

  /// The same values in another element type (float<->float rounds, float->int truncates).
  Tensor cast(ElemType to) const;
  /// "float32[2, 3]"
  std::string describe() const;
  TensorShape shape_only() const { return {type_, shape_}; }

 private:
  void allocate();  // data_ for type_ and shape_ (numel_ set), not filled
  struct FreeDeleter {
    void operator()(void* p) const;
  };
  ElemType type_ = ElemType::F32;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  std::shared_ptr<void> data_;  // shared: copies of a Tensor alias, like a view
};

/// Uniform random values in [lo, hi) for floats, integers in [0, int_hi) for
/// integer tensors; deterministic in the seed (splitmix64, not std distributions,
/// so results are identical across standard libraries).
Tensor random_tensor(ElemType type, std::vector<int64_t> shape, uint64_t seed, double lo = -1.0,
                     double hi = 1.0, int64_t int_hi = 10);

/// Max |a-b| and max |a-b| / max(|b|, floor) over all elements; shapes must match.
struct Diff {
  double max_abs = 0;
  double max_rel = 0;
  int64_t worst_index = -1;
};
Diff compare(const Tensor& a, const Tensor& b, double rel_floor = 1e-6);

}  // namespace tenet
