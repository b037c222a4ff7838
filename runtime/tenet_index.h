/// \file
/// Run-time checks of computed indices (reads like `LUT(I(i, k), j)` whose
/// index is data-dependent or not affine), for generated C++ and the
/// reference interpreter, which word their errors with the same function.
///
/// Generated code checks each computed index with checked_index. A value
/// outside [0, extent) is recorded in the call's IndexFault (the first one
/// wins; any thread may record) and replaced by 0, so the loop nest finishes
/// without touching memory outside the tensor; after the statement, outside
/// any parallel region, raise_if_failed() throws IndexError. Only the failing
/// path allocates (the message).
///
/// Expects: C++17 and the standard library.
#pragma once

#include <atomic>
#include <cctype>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tenet {

/// Where a computed index is read, for its error message.
struct IndexSite {
  const char* index;      // the index expression: "I(i, k)"
  const char* read;       // the whole read: "LUT(I(i, k), j)"
  const char* tensor;     // "LUT"
  int dimension;          // of `tensor`
  const char* statement;  // the tensor the statement defines: "O"
  const char* names;      // the loop variables and indices in scope, outermost first: "i, k, j"
};

/// The names of site.names, in order.
inline std::vector<std::string> index_names(const IndexSite& site) {
  std::vector<std::string> out;
  std::string name;
  for (const char* p = site.names; *p; ++p) {
    if (*p == ',' || *p == ' ') {
      if (!name.empty()) out.push_back(name);
      name.clear();
    } else {
      name += *p;
    }
  }
  if (!name.empty()) out.push_back(name);
  return out;
}

/// `text` with every name of `site.names` that is not a tensor (not followed
/// by '(') replaced by its value in `at`: "I(i, k)" at i = 2, k = 0 gives "I(2, 0)".
inline std::string index_with_values(const char* text, const IndexSite& site, const int64_t* at) {
  const std::vector<std::string> names = index_names(site);
  const int count = int(names.size());
  std::string out;
  for (const char* p = text; *p;) {
    const bool starts_name = std::isalpha(static_cast<unsigned char>(*p)) || *p == '_';
    if (!starts_name) {
      out += *p++;
      continue;
    }
    const char* end = p;
    while (std::isalnum(static_cast<unsigned char>(*end)) || *end == '_' || *end == '.') ++end;
    const std::string name(p, end);
    int k = *end == '(' ? count : 0;
    while (k < count && name != names[size_t(k)]) ++k;
    out += k < count ? std::to_string(at[k]) : name;
    p = end;
  }
  return out;
}

/// "index I(2, 0) = 57 is outside [0, 20) of LUT dimension 0, in the read
/// LUT(I(i, k), j) of the statement defining 'O' at i = 2, k = 0, j = 1".
inline std::string index_error_message(const IndexSite& site, int64_t value, int64_t extent,
                                       const int64_t* at) {
  const std::vector<std::string> names = index_names(site);
  std::string where;
  for (size_t k = 0; k < names.size(); ++k)
    where += (k ? ", " : "") + names[k] + " = " + std::to_string(at[k]);
  return "index " + index_with_values(site.index, site, at) + " = " + std::to_string(value) +
         " is outside [0, " + std::to_string(extent) + ") of " + site.tensor + " dimension " +
         std::to_string(site.dimension) + ", in the read " + site.read +
         " of the statement defining '" + site.statement + "'" +
         (where.empty() ? "" : " at " + where);
}

/// "the index I(2, 0) * 4611686018427387904 of LUT dimension 0 overflows
/// 64-bit integers (2 * 4611686018427387904), in the read LUT(I(i, k) *
/// 4611686018427387904, j) of the statement defining 'O' at i = 2, k = 0":
/// a step of a computed index's int64 arithmetic whose exact value int64
/// cannot hold (or a division by zero). Wrapped, it could land inside the
/// tensor and read the wrong element.
inline std::string index_overflow_message(const IndexSite& site, char op, int64_t a, int64_t b,
                                          const int64_t* at) {
  const std::vector<std::string> names = index_names(site);
  std::string where;
  for (size_t k = 0; k < names.size(); ++k)
    where += (k ? ", " : "") + names[k] + " = " + std::to_string(at[k]);
  const bool by_zero = (op == '/' || op == '%') && b == 0;
  const std::string step = op == '~' ? "-(" + std::to_string(a) + ")"
                                     : std::to_string(a) + " " + op + " " + std::to_string(b);
  return "the index " + index_with_values(site.index, site, at) + " of " + site.tensor +
         " dimension " + std::to_string(site.dimension) +
         (by_zero ? " divides by zero (" : " overflows 64-bit integers (") + step +
         "), in the read " + site.read + " of the statement defining '" + site.statement + "'" +
         (where.empty() ? "" : " at " + where);
}

/// A computed index out of range (what generated code throws after the statement).
class IndexError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The first out-of-range computed index of one call.
class IndexFault {
 public:
  void record(const IndexSite& site, int64_t value, int64_t extent, const int64_t* at) {
    if (claimed_.exchange(true, std::memory_order_acq_rel)) return;
    message_ = index_error_message(site, value, extent, at);
  }
  void record_overflow(const IndexSite& site, char op, int64_t a, int64_t b, const int64_t* at) {
    if (claimed_.exchange(true, std::memory_order_acq_rel)) return;
    message_ = index_overflow_message(site, op, a, b, at);
  }
  /// Call outside parallel regions (their end orders record before it).
  void raise_if_failed() const {
    if (claimed_.load(std::memory_order_acquire)) throw IndexError(message_);
  }

 private:
  std::atomic<bool> claimed_{false};
  std::string message_;
};

/// `value` when it lies in [0, extent); otherwise records the fault and
/// returns 0 (generated code reads a tensor through a computed index only
/// when that dimension is not empty). `at`: the values of site.names.
template <typename... At>
inline int64_t checked_index(int64_t value, int64_t extent, IndexFault& fault,
                             const IndexSite& site, At... at) {
  if (__builtin_expect(static_cast<uint64_t>(value) < static_cast<uint64_t>(extent), 1))
    return value;
  const int64_t values[] = {int64_t(at)..., 0};
  fault.record(site, value, extent, values);
  return 0;
}

/// The exact result of one step of a computed index's int64 arithmetic
/// (`op`: + - * / % or '~' for negation; / and % truncate, as int_div and
/// int_rem), or false when int64 cannot hold it or the divisor is zero.
inline bool exact_index_step(char op, int64_t a, int64_t b, int64_t& out) {
  switch (op) {
    case '+':
      return !__builtin_add_overflow(a, b, &out);
    case '-':
      return !__builtin_sub_overflow(a, b, &out);
    case '*':
      return !__builtin_mul_overflow(a, b, &out);
    case '~':
      return !__builtin_sub_overflow(int64_t(0), a, &out);
    case '/':
      if (b == 0 || (a == INT64_MIN && b == -1)) return false;
      out = a / b;
      return true;
    case '%':
      if (b == 0) return false;
      out = b == -1 ? 0 : a % b;
      return true;
  }
  return false;
}

/// One step of a computed index's arithmetic, checked like checked_index:
/// a value int64 cannot hold records the fault and gives 0.
template <char Op, typename... At>
inline int64_t index_step(int64_t a, int64_t b, IndexFault& fault, const IndexSite& site,
                          At... at) {
  int64_t out;
  if (__builtin_expect(exact_index_step(Op, a, b, out), 1)) return out;
  const int64_t values[] = {int64_t(at)..., 0};
  fault.record_overflow(site, Op, a, b, values);
  return 0;
}

}  // namespace tenet
