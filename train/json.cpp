#include "train/json.h"

#include <charconv>

namespace tenet::train {
namespace {

constexpr int kMaxDepth = 64;

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : s_(text) {}

  JsonValue parse_document() {
    check_utf8();
    skip_space();
    JsonValue v = value(0);
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw JsonError(pos_, what); }

  // RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF.
  void check_utf8() const {
    size_t i = 0;
    while (i < s_.size()) {
      const auto byte = [&](size_t k) { return static_cast<unsigned char>(s_[i + k]); };
      const unsigned char c = byte(0);
      size_t len = 1;
      unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
      if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
      } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
      } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
      } else if (c >= 0x80) {
        throw JsonError(i, "invalid UTF-8");
      }
      if (i + len > s_.size()) throw JsonError(i, "invalid UTF-8 (truncated sequence)");
      if (len > 1 && (byte(1) < lo || byte(1) > hi)) throw JsonError(i, "invalid UTF-8");
      for (size_t k = 2; k < len; ++k)
        if ((byte(k) & 0xC0) != 0x80) throw JsonError(i, "invalid UTF-8");
      i += len;
    }
  }

  void skip_space() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }

  void expect(char c) {
    if (peek() != c || pos_ >= s_.size()) fail(std::string("expected '") + c + "'" + found());
    ++pos_;
  }

  std::string found() const {
    if (pos_ >= s_.size()) return " but the header ends";
    return std::string(" but found '") + s_[pos_] + "'";
  }

  JsonValue value(int depth) {
    if (depth > kMaxDepth) fail("nested deeper than 64 levels");
    JsonValue v;
    v.offset = pos_;
    const char c = peek();
    if (pos_ >= s_.size()) fail("expected a value but the header ends");
    if (c == '{') {
      object(v, depth);
    } else if (c == '[') {
      array(v, depth);
    } else if (c == '"') {
      v.type = JsonValue::Type::String;
      v.text = string();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.type = JsonValue::Type::Number;
      v.text = number();
    } else if (literal("true")) {
      v.type = JsonValue::Type::Bool;
      v.boolean = true;
    } else if (literal("false")) {
      v.type = JsonValue::Type::Bool;
    } else if (!literal("null")) {
      fail("expected a value" + found());
    }
    return v;
  }

  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  void object(JsonValue& v, int depth) {
    v.type = JsonValue::Type::Object;
    expect('{');
    skip_space();
    if (peek() == '}' && pos_ < s_.size()) {
      ++pos_;
      return;
    }
    for (;;) {
      skip_space();
      if (peek() != '"' || pos_ >= s_.size()) fail("expected a member name in quotes" + found());
      std::string key = string();
      skip_space();
      expect(':');
      skip_space();
      JsonValue member = value(depth + 1);
      v.members.push_back({std::move(key), std::move(member)});
      skip_space();
      if (peek() == ',' && pos_ < s_.size()) {
        ++pos_;
        continue;
      }
      if (peek() != '}' || pos_ >= s_.size()) fail("expected ',' or '}'" + found());
      ++pos_;
      return;
    }
  }

  void array(JsonValue& v, int depth) {
    v.type = JsonValue::Type::Array;
    expect('[');
    skip_space();
    if (peek() == ']' && pos_ < s_.size()) {
      ++pos_;
      return;
    }
    for (;;) {
      skip_space();
      v.items.push_back(value(depth + 1));
      skip_space();
      if (peek() == ',' && pos_ < s_.size()) {
        ++pos_;
        continue;
      }
      if (peek() != ']' || pos_ >= s_.size()) fail("expected ',' or ']'" + found());
      ++pos_;
      return;
    }
  }

  static bool digit(char c) { return c >= '0' && c <= '9'; }

  std::string number() {
    const size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (digit(peek())) {
      while (digit(peek())) ++pos_;
    } else {
      fail("expected a digit" + found());
    }
    if (peek() == '.') {
      ++pos_;
      if (!digit(peek())) fail("expected a digit after '.'" + found());
      while (digit(peek())) ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!digit(peek())) fail("expected an exponent" + found());
      while (digit(peek())) ++pos_;
    }
    return std::string(s_.substr(start, pos_ - start));
  }

  unsigned hex4() {
    unsigned v = 0;
    for (int i = 0; i < 4; ++i, ++pos_) {
      const char c = peek();
      v <<= 4;
      if (digit(c))
        v |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= unsigned(c - 'A' + 10);
      else
        fail("expected 4 hex digits after \\u");
    }
    return v;
  }

  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  unsigned escaped_code_point() {
    unsigned cp = hex4();
    if (cp >= 0xDC00 && cp <= 0xDFFF) fail("unpaired low surrogate in \\u escape");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (!literal("\\u")) fail("unpaired high surrogate in \\u escape");
      const unsigned low = hex4();
      if (low < 0xDC00 || low > 0xDFFF) fail("unpaired high surrogate in \\u escape");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    return cp;
  }

  std::string string() {
    expect('"');
    std::string out;
    for (;;) {
      if (pos_ >= s_.size()) fail("unterminated string");
      const char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) {
        --pos_;
        fail("control character in a string");
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      const char e = peek();
      ++pos_;
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u':
          append_utf8(out, escaped_code_point());
          break;
        default:
          --pos_;
          fail("invalid escape in a string");
      }
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

std::optional<uint64_t> JsonValue::as_uint() const {
  if (type != Type::Number) return std::nullopt;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

const char* JsonValue::type_name() const {
  switch (type) {
    case Type::Null:
      return "null";
    case Type::Bool:
      return "a boolean";
    case Type::Number:
      return "a number";
    case Type::String:
      return "a string";
    case Type::Array:
      return "an array";
    case Type::Object:
      return "an object";
  }
  return "?";
}

JsonValue parse_json(std::string_view text) {
  return JsonParser(text).parse_document();
}

std::string json_quote(std::string_view s) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += "\\u00";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace tenet::train
