/// \file
/// A strict JSON reader and string quoting, for headers of files that may
/// come from anyone (safetensors). The grammar is nlohmann-json's SAX parser
/// (nlohmann/json.hpp, MIT; emitted standalone projects ship a copy), which
/// reads without recursion; this file adds what a reader of untrusted text
/// needs and nlohmann does not do: no duplicate keys, bounded nesting and
/// size, numbers kept as written, and errors in plain words with the byte.
///
/// Strict: RFC 8259 only (no comments, trailing commas, NaN, byte order mark
/// or lone surrogates), strings valid UTF-8, no duplicate key in an object,
/// nesting at most 64 deep, at most 4 million values, numbers within the
/// range of a double. Numbers keep the text they were written with, so
/// integers beyond 2^53 are exact and error messages show what the file says.
/// Time and memory are linear in the text.
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
  enum class Category { Syntax, Depth, Duplicate, Range, Size };
  Error(Category category, std::string what, std::optional<size_t> offset)
      : std::runtime_error(what), category(category), offset(offset) {}
  Category category;
  std::optional<size_t> offset;
  std::string key;
  std::vector<std::string> path;
};

inline constexpr int kMaxDepth = 64;
inline constexpr size_t kMaxValues = 4'000'000;

/// What a text may hold: nesting depth and the number of values (every
/// scalar, array and object counts one; keys do not).
struct Limits {
  int max_depth = kMaxDepth;
  size_t max_values = kMaxValues;
};

/// Parses one JSON value filling the whole text (white space around it is
/// allowed). Throws Error: "nested deeper than N levels" (Depth), "holds
/// more than N values" (Size), a duplicate key (Duplicate), a number beyond
/// a double (Range), anything else (Syntax, with the byte).
Value parse(std::string_view text, const Limits& limits = {});

/// Whether `s` is valid UTF-8 (no overlong forms, surrogates or values
/// beyond U+10FFFF).
bool is_utf8(std::string_view s);
/// `s` as a JSON string literal (quotes included); `s` must be valid UTF-8.
std::string quote(std::string_view s);

}  // namespace tenet::json
