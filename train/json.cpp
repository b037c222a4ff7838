// The strict JSON reader of train/json.h: recursive descent over the bytes,
// depth-limited, so untrusted text cannot exhaust the stack.
#include "train/json.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tenet::json {

namespace {

/// The length of the UTF-8 sequence at s[i] (1..4), or 0 when invalid.
size_t utf8_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint32_t code = 0, min = 0;
  if ((c & 0xE0) == 0xC0) {
    n = 2, code = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, code = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, code = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

void append_utf8(std::string& out, uint32_t code) {
  if (code < 0x80) {
    out += char(code);
  } else if (code < 0x800) {
    out += char(0xC0 | (code >> 6));
    out += char(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += char(0xE0 | (code >> 12));
    out += char(0x80 | ((code >> 6) & 0x3F));
    out += char(0x80 | (code & 0x3F));
  } else {
    out += char(0xF0 | (code >> 18));
    out += char(0x80 | ((code >> 12) & 0x3F));
    out += char(0x80 | ((code >> 6) & 0x3F));
    out += char(0x80 | (code & 0x3F));
  }
}

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Value document() {
    skip_space();
    Value v = value(0);
    skip_space();
    if (at_ < s_.size()) fail("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(Error::Category::Syntax, what, at_);
  }
  /// "unexpected 'x'; expected WHAT", or "expected WHAT but the text ends".
  [[noreturn]] void expected(const std::string& what) const {
    if (at_ >= s_.size()) fail("expected " + what + " but the header ends");
    const char c = s_[at_];
    const bool printable = c >= 0x20 && c < 0x7F;
    fail(std::string("unexpected ") + (printable ? "'" + std::string(1, c) + "'" : "byte") +
         "; expected " + what);
  }

  void skip_space() {
    while (at_ < s_.size() &&
           (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\n' || s_[at_] == '\r'))
      ++at_;
  }

  Value value(int depth) {
    if (at_ >= s_.size()) expected("a value");
    switch (s_[at_]) {
      case '{':
        return object(depth + 1);
      case '[':
        return array(depth + 1);
      case '"': {
        Value v;
        v.kind = Value::Kind::String;
        v.text = string();
        return v;
      }
      case 't':
        return literal("true", Value::Kind::Bool, true);
      case 'f':
        return literal("false", Value::Kind::Bool, false);
      case 'n':
        return literal("null", Value::Kind::Null, false);
      default:
        if (s_[at_] == '-' || (s_[at_] >= '0' && s_[at_] <= '9')) return number();
        expected("a value");
    }
  }

  void check_depth(int depth) const {
    if (depth > kMaxDepth)
      throw Error(Error::Category::Depth,
                  "nested deeper than " + std::to_string(kMaxDepth) + " levels", at_);
  }

  Value object(int depth) {
    check_depth(depth);
    Value v;
    v.kind = Value::Kind::Object;
    ++at_;  // {
    skip_space();
    if (at_ < s_.size() && s_[at_] == '}') {
      ++at_;
      return v;
    }
    while (true) {
      skip_space();
      if (at_ >= s_.size() || s_[at_] != '"') expected("a member name in quotes");
      std::string key = string();
      if (v.find(key)) {
        Error e(Error::Category::Duplicate, "'" + key + "' appears twice", std::nullopt);
        e.key = key;
        throw e;
      }
      skip_space();
      if (at_ >= s_.size() || s_[at_] != ':') expected("':'");
      ++at_;
      skip_space();
      Value member;
      try {
        member = value(depth);
      } catch (Error& e) {  // the path of a duplicate key, from the inside out
        if (e.category == Error::Category::Duplicate) e.path.insert(e.path.begin(), key);
        throw;
      }
      v.members.push_back(Member{std::move(key), std::move(member)});
      skip_space();
      if (at_ < s_.size() && s_[at_] == ',') {
        ++at_;
        continue;
      }
      if (at_ < s_.size() && s_[at_] == '}') {
        ++at_;
        return v;
      }
      expected("',' or '}'");
    }
  }

  Value array(int depth) {
    check_depth(depth);
    Value v;
    v.kind = Value::Kind::Array;
    ++at_;  // [
    skip_space();
    if (at_ < s_.size() && s_[at_] == ']') {
      ++at_;
      return v;
    }
    while (true) {
      skip_space();
      try {
        v.items.push_back(value(depth));
      } catch (Error& e) {
        if (e.category == Error::Category::Duplicate) e.path.insert(e.path.begin(), "");
        throw;
      }
      skip_space();
      if (at_ < s_.size() && s_[at_] == ',') {
        ++at_;
        continue;
      }
      if (at_ < s_.size() && s_[at_] == ']') {
        ++at_;
        return v;
      }
      expected("',' or ']'");
    }
  }

  Value literal(std::string_view word, Value::Kind kind, bool boolean) {
    for (char c : word) {
      if (at_ >= s_.size() || s_[at_] != c) fail("invalid literal");
      ++at_;
    }
    Value v;
    v.kind = kind;
    v.boolean = boolean;
    return v;
  }

  Value number() {
    const size_t start = at_;
    const auto digits = [&] {
      const size_t from = at_;
      while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') ++at_;
      return at_ - from;
    };
    if (s_[at_] == '-') ++at_;
    if (at_ < s_.size() && s_[at_] == '0') {
      ++at_;
    } else if (digits() == 0) {
      fail("invalid number: expected a digit");
    }
    if (at_ < s_.size() && s_[at_] == '.') {
      ++at_;
      if (digits() == 0) fail("invalid number: expected a digit after '.'");
    }
    if (at_ < s_.size() && (s_[at_] == 'e' || s_[at_] == 'E')) {
      ++at_;
      if (at_ < s_.size() && (s_[at_] == '+' || s_[at_] == '-')) ++at_;
      if (digits() == 0) fail("invalid number: expected a digit in the exponent");
    }
    Value v;
    v.kind = Value::Kind::Number;
    v.text = std::string(s_.substr(start, at_ - start));
    errno = 0;
    const double d = std::strtod(v.text.c_str(), nullptr);
    if (errno == ERANGE && (d > 1 || d < -1))  // underflow to 0 is fine
      throw Error(Error::Category::Range, "a number is beyond the range of a 64-bit float",
                  std::nullopt);
    return v;
  }

  uint32_t hex4() {
    uint32_t code = 0;
    for (int k = 0; k < 4; ++k, ++at_) {
      if (at_ >= s_.size()) fail("invalid string: '\\u' must be followed by 4 hex digits");
      const char c = s_[at_];
      const int digit = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
      if (digit < 0) fail("invalid string: '\\u' must be followed by 4 hex digits");
      code = code * 16 + uint32_t(digit);
    }
    return code;
  }

  std::string string() {
    ++at_;  // "
    std::string out;
    while (true) {
      if (at_ >= s_.size()) fail("invalid string: missing closing quote");
      const unsigned char c = static_cast<unsigned char>(s_[at_]);
      if (c == '"') {
        ++at_;
        return out;
      }
      if (c < 0x20) {
        char code[8];
        std::snprintf(code, sizeof code, "%04X", unsigned(c));
        fail(std::string("invalid string: control character U+") + code + " must be escaped");
      }
      if (c == '\\') {
        escape(out);
        continue;
      }
      const size_t n = utf8_length(s_, at_);
      if (n == 0) fail("invalid UTF-8 in a string");
      out.append(s_.substr(at_, n));
      at_ += n;
    }
  }

  void escape(std::string& out) {
    ++at_;  // backslash
    if (at_ >= s_.size()) fail("invalid string: missing closing quote");
    const char c = s_[at_++];
    switch (c) {
      case '"':
      case '\\':
      case '/':
        out += c;
        return;
      case 'b':
        out += '\b';
        return;
      case 'f':
        out += '\f';
        return;
      case 'n':
        out += '\n';
        return;
      case 'r':
        out += '\r';
        return;
      case 't':
        out += '\t';
        return;
      case 'u':
        break;
      default:
        --at_;
        fail("invalid string: unknown escape");
    }
    uint32_t code = hex4();
    if (code >= 0xDC00 && code <= 0xDFFF)
      fail("invalid string: surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF");
    if (code >= 0xD800 && code <= 0xDBFF) {
      if (s_.substr(at_, 2) != "\\u")
        fail("invalid string: surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF");
      at_ += 2;
      const uint32_t low = hex4();
      if (low < 0xDC00 || low > 0xDFFF)
        fail("invalid string: surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF");
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(out, code);
  }

  std::string_view s_;
  size_t at_ = 0;
};

}  // namespace

const Value* Value::find(std::string_view key) const {
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

std::optional<uint64_t> Value::as_uint64() const {
  if (kind != Kind::Number || text.empty()) return std::nullopt;
  uint64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t digit = uint64_t(c - '0');
    if (n > (UINT64_MAX - digit) / 10) return std::nullopt;
    n = n * 10 + digit;
  }
  return n;
}

const char* Value::kind_name() const {
  switch (kind) {
    case Kind::Null:
      return "null";
    case Kind::Bool:
      return "a boolean";
    case Kind::Number:
      return "a number";
    case Kind::String:
      return "a string";
    case Kind::Array:
      return "an array";
    case Kind::Object:
      return "an object";
  }
  return "a value";
}

Value parse(std::string_view text) {
  return Parser(text).document();
}

bool is_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char code[8];
      std::snprintf(code, sizeof code, "\\u%04x", unsigned(static_cast<unsigned char>(c)));
      out += code;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace tenet::json
