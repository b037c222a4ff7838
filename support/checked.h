/// \file
/// Checked size arithmetic: element counts and byte sizes come from users
/// (--sizes, file headers, model shapes), so every product and sum of them is
/// checked for 64-bit overflow here rather than wrapping into a small, wrong
/// size that a later allocation or loop trusts.
///
/// The cap: a tensor's element count and its byte size must both fit in
/// int64_t (so byte offsets fit in ptrdiff_t); an allocation beyond the
/// machine's memory (RAM plus swap) is refused with a BindError, not a
/// std::bad_alloc or an out-of-memory kill while zero-filling.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "support/types.h"

namespace tenet {

/// a + b, a * b, or nullopt when the result does not fit in int64_t.
inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// "(2, 3, 4)": a concrete shape as messages about sizes print it.
std::string shape_text(const std::vector<int64_t>& shape);

/// The element count of a shape whose dimensions are non-negative, or
/// nullopt when the product of its non-zero dimensions overflows int64_t:
/// (0, 2^62, 4) has no elements, but strides no 64-bit integer holds.
std::optional<int64_t> checked_numel(const std::vector<int64_t>& shape);

/// Throws BindError when a tensor of this type and shape cannot exist: a
/// negative dimension, or an element count or byte size (counting a zero
/// dimension as 1, as strides do) that overflows int64_t. `what` names it:
/// "tensor 'y'" gives
///   tensor 'y' of shape (1073741824, 1073741824, 4): 4611686018427387904
///   elements of 4 bytes overflow a 64-bit byte size
/// Returns the byte size.
int64_t check_tensor_bytes(const std::string& what, ElemType type,
                           const std::vector<int64_t>& shape);

/// The most bytes one allocation may ask for: the machine's RAM plus swap
/// (INT64_MAX where it cannot be told).
int64_t max_allocation_bytes();

/// Throws BindError naming `what` when `bytes` is more than
/// max_allocation_bytes(); the caller then allocates, and treats a null
/// result the same way (see allocation_failed).
void check_allocation(const std::string& what, int64_t bytes);
[[noreturn]] void allocation_failed(const std::string& what, int64_t bytes);

}  // namespace tenet
