/// \file
/// A small, strict JSON reader and string quoting, for headers of files that
/// may come from anyone (safetensors). It is part of the runtime that emitted
/// standalone projects copy (codegen/standalone.h), so it needs nothing but
/// the standard library.
///
/// Strict: RFC 8259 only (no comments, trailing commas, NaN, or lone
/// surrogates), strings valid UTF-8, no duplicate key in an object, nesting
/// at most 64 deep, numbers within the range of a double. Numbers keep the
/// text they were written with, so integers beyond 2^53 are exact and error
/// messages show what the file says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tenet::json {

struct Member;

struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  std::string text;  // a string's contents (UTF-8), a number as written
  std::vector<Value> items;
  std::vector<Member> members;  // in document order, keys unique

  bool is_object() const { return kind == Kind::Object; }
  bool is_array() const { return kind == Kind::Array; }
  bool is_string() const { return kind == Kind::String; }
  bool is_number() const { return kind == Kind::Number; }
  /// The member of that key, or nullptr.
  const Value* find(std::string_view key) const;
  /// A number written as a plain non-negative integer (no sign, fraction or
  /// exponent) that fits in 64 bits; nullopt otherwise.
  std::optional<uint64_t> as_uint64() const;
  /// "an object", "an array", "a string", "a number", "a boolean", "null".
  const char* kind_name() const;
};

struct Member {
  std::string key;
  Value value;
};

/// Why a text is refused. `offset` is the byte (from the start of the text)
/// where reading stopped, when there is one. A duplicate key has `key` set
/// and `path`: the keys of the enclosing objects from the outermost ("" for
/// an array).
class Error : public std::runtime_error {
 public:
  enum class Category { Syntax, Depth, Duplicate, Range };
  Error(Category category, std::string what, std::optional<size_t> offset)
      : std::runtime_error(what), category(category), offset(offset) {}
  Category category;
  std::optional<size_t> offset;
  std::string key;
  std::vector<std::string> path;
};

inline constexpr int kMaxDepth = 64;

/// Parses one JSON value filling the whole text (white space around it is
/// allowed). Throws Error.
Value parse(std::string_view text);

/// Whether `s` is valid UTF-8 (no overlong forms, surrogates or values
/// beyond U+10FFFF).
bool is_utf8(std::string_view s);
/// `s` as a JSON string literal (quotes included); `s` must be valid UTF-8.
std::string quote(std::string_view s);

}  // namespace tenet::json
