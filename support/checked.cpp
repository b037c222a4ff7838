#include "support/checked.h"

#include <sys/sysinfo.h>

#include <limits>

#include "support/error.h"

namespace tenet {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

std::optional<int64_t> checked_numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  bool empty = false;
  for (int64_t d : shape) {
    empty = empty || d == 0;
    auto next = checked_mul(n, d == 0 ? 1 : d);
    if (!next) return std::nullopt;
    n = *next;
  }
  return empty ? 0 : n;
}

int64_t check_tensor_bytes(const std::string& what, ElemType type,
                           const std::vector<int64_t>& shape) {
  const std::string head = what + " of shape " + shape_text(shape);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0) throw BindError(head + ": dimension " + std::to_string(i) + " is negative");
  const auto numel = checked_numel(shape);
  if (!numel) throw BindError(head + ": its element count overflows a 64-bit integer");
  // With a zero dimension, the other dimensions' product still sets the
  // strides, so it must fit too.
  std::vector<int64_t> nonzero;
  for (int64_t d : shape) nonzero.push_back(d == 0 ? 1 : d);
  const int64_t span = *checked_numel(nonzero);
  const auto bytes = checked_mul(span, byte_size(type));
  if (!bytes)
    throw BindError(head + ": " + std::to_string(span) + " elements of " +
                    std::to_string(byte_size(type)) + " bytes overflow a 64-bit byte size" +
                    (*numel == 0 ? " (counting each zero dimension as 1, as strides do)" : ""));
  return *numel * byte_size(type);
}

int64_t max_allocation_bytes() {
  struct sysinfo info {};
  if (sysinfo(&info) != 0 || info.mem_unit == 0) return std::numeric_limits<int64_t>::max();
  const auto units = checked_add(int64_t(info.totalram), int64_t(info.totalswap));
  const auto bytes = units ? checked_mul(*units, int64_t(info.mem_unit)) : std::nullopt;
  return bytes ? *bytes : std::numeric_limits<int64_t>::max();
}

void allocation_failed(const std::string& what, int64_t bytes) {
  throw BindError("cannot allocate " + std::to_string(bytes) + " bytes for " + what +
                  " (this machine has " + std::to_string(max_allocation_bytes()) +
                  " bytes of RAM and swap)");
}

void check_allocation(const std::string& what, int64_t bytes) {
  if (bytes > max_allocation_bytes()) allocation_failed(what, bytes);
}

}  // namespace tenet
