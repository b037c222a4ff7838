/// \file
/// A small JSON reader and string escaper, enough for safetensors headers
/// (train/safetensors.h). Internal to train/.
///
/// parse_json accepts exactly RFC 8259 JSON (one value, surrounded by
/// optional whitespace) in valid UTF-8, nested at most 64 deep; anything else
/// is a JsonError with the byte offset and what was expected. Numbers keep
/// their text so integers are read exactly; object members keep their order
/// and duplicates are reported by the caller.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tenet::train {

class JsonError : public std::runtime_error {
 public:
  JsonError(size_t offset, const std::string& what) : std::runtime_error(what), offset_(offset) {}
  size_t offset() const { return offset_; }

 private:
  size_t offset_;
};

struct JsonMember;

struct JsonValue {
  enum class Type { Null, Bool, Number, String, Array, Object };
  Type type = Type::Null;
  bool boolean = false;
  std::string text;                 // a String's value (unescaped) or a Number's literal text
  std::vector<JsonValue> items;     // Array
  std::vector<JsonMember> members;  // Object, in order
  size_t offset = 0;                // where the value starts

  /// A Number that is a non-negative integer fitting in uint64 ("12", not "1.2e1").
  std::optional<uint64_t> as_uint() const;
  /// "a string", "an array", ... for error messages.
  const char* type_name() const;
};

struct JsonMember {
  std::string key;
  JsonValue value;
};

JsonValue parse_json(std::string_view text);

/// `s` as a JSON string literal, with quotes; control characters, '"' and '\'
/// escaped, other bytes (UTF-8) copied.
std::string json_quote(std::string_view s);

}  // namespace tenet::train
