// The strict JSON reader of train/json.h over nlohmann-json's SAX parser
// (nlohmann/json.hpp, which standalone projects ship): nlohmann checks the
// grammar, UTF-8 and escapes, without recursion; the handler here builds the
// tree, refusing duplicate keys, deep nesting and too many values as it goes,
// and the parse errors are told in our words (the tests pin them).
#include "train/json.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
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

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

bool starts_with(std::string_view s, std::string_view head) {
  return s.substr(0, head.size()) == head;
}

/// nlohmann's lexer messages in our words (the rest are the same).
std::string lexer_message(const std::string& m) {
  static const std::pair<const char*, const char*> kWords[] = {
      {"invalid string: forbidden character after backslash", "invalid string: unknown escape"},
      {"invalid string: ill-formed UTF-8 byte", "invalid UTF-8 in a string"},
      {"invalid number; expected digit after '-'", "invalid number: expected a digit"},
      {"invalid number; expected digit after '.'", "invalid number: expected a digit after '.'"},
      {"invalid number; expected '+', '-', or digit after exponent",
       "invalid number: expected a digit in the exponent"},
      {"invalid number; expected digit after exponent sign",
       "invalid number: expected a digit in the exponent"},
  };
  for (const auto& [theirs, ours] : kWords)
    if (m == theirs) return ours;
  // "invalid string: control character U+000A (LF) must be escaped to \u000A or \n"
  const std::string control = "invalid string: control character U+";
  if (starts_with(m, control)) return m.substr(0, control.size() + 4) + " must be escaped";
  return m;
}

/// Builds the Value tree from nlohmann's events, one container per open
/// level; refuses what nlohmann accepts and train/json.h does not. A
/// duplicate key is found when its object closes.
class Builder : public nlohmann::json_sax<nlohmann::json> {
 public:
  Builder(std::string_view text, const Limits& limits) : text_(text), limits_(limits) {}

  Value root;
  std::optional<Error> error;

  bool null() override { return add(Value()); }
  bool boolean(bool b) override {
    Value v;
    v.kind = Value::Kind::Bool;
    v.boolean = b;
    return add(std::move(v));
  }
  // nlohmann reads a number without sign as unsigned when it fits in 64
  // bits, with a sign as integer when it fits, else as a float (with the
  // text): the text as written is the decimal of the first two.
  bool number_integer(number_integer_t n) override {
    return number("-" + std::to_string(0 - static_cast<uint64_t>(n)));
  }
  bool number_unsigned(number_unsigned_t n) override { return number(std::to_string(n)); }
  bool number_float(number_float_t, const string_t& text) override { return number(text); }
  bool string(string_t& s) override {
    Value v;
    v.kind = Value::Kind::String;
    v.text = std::move(s);
    return add(std::move(v));
  }
  bool binary(binary_t&) override { return false; }  // not in JSON text

  bool start_object(std::size_t) override { return open(Value::Kind::Object); }
  bool start_array(std::size_t) override { return open(Value::Kind::Array); }
  bool key(string_t& k) override {
    open_.back().members.push_back(Member{std::move(k), Value()});
    return true;
  }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& ex) override {
    if (!error) error = translate(position, last_token, ex);
    return false;
  }

 private:
  bool refuse(Error e) {
    error = std::move(e);
    return false;
  }

  bool count() {
    if (++values_ <= limits_.max_values) return true;
    return refuse(Error(Error::Category::Size,
                        "holds more than " + std::to_string(limits_.max_values) + " values",
                        std::nullopt));
  }

  bool number(std::string text) {
    Value v;
    v.kind = Value::Kind::Number;
    v.text = std::move(text);
    return add(std::move(v));
  }

  bool add(Value v) {
    if (!count()) return false;
    if (open_.empty())
      root = std::move(v);
    else if (open_.back().is_array())
      open_.back().items.push_back(std::move(v));
    else
      open_.back().members.back().value = std::move(v);  // key() added the member
    return true;
  }

  bool open(Value::Kind kind) {
    if (int(open_.size()) >= limits_.max_depth)
      return refuse(Error(Error::Category::Depth,
                          "nested deeper than " + std::to_string(limits_.max_depth) + " levels",
                          std::nullopt));
    if (!count()) return false;
    --values_;  // counted again when closed
    Value v;
    v.kind = kind;
    open_.push_back(std::move(v));
    return true;
  }

  bool close() {
    if (open_.back().is_object() && !unique_keys(open_.back())) return false;
    Value v = std::move(open_.back());
    open_.pop_back();
    return add(std::move(v));
  }

  /// Whether the object's keys differ, sorted (n log n: a hash set of the
  /// keys costs more here); a Duplicate error naming the first repeated key
  /// and where the object is otherwise.
  bool unique_keys(const Value& object) {
    std::vector<const std::string*> keys;
    keys.reserve(object.members.size());
    for (const Member& m : object.members) keys.push_back(&m.key);
    std::sort(keys.begin(), keys.end(),
              [](const std::string* a, const std::string* b) { return *a < *b; });
    const std::string* repeated = nullptr;
    for (size_t i = 1; i < keys.size(); ++i)
      if (*keys[i] == *keys[i - 1] && (!repeated || keys[i] < repeated)) repeated = keys[i];
    if (!repeated) return true;
    Error e(Error::Category::Duplicate, "'" + *repeated + "' appears twice", std::nullopt);
    e.key = *repeated;
    for (size_t i = 0; i + 1 < open_.size(); ++i)
      e.path.push_back(open_[i].is_object() ? open_[i].members.back().key : "");
    return refuse(std::move(e));
  }

  Error translate(size_t position, const std::string& last_token,
                  const nlohmann::detail::exception& ex) const;

  /// Whether the bytes before `at` begin true, false or null (so that the
  /// lexer's "invalid literal" at `at` is a misspelt literal, not a stray byte).
  bool partial_literal_before(size_t at) const {
    size_t start = at;
    while (start > 0 &&
           std::string_view("truefalsn").find(text_[start - 1]) != std::string_view::npos)
      --start;
    const std::string_view word = text_.substr(start, at - start);
    if (word.empty()) return false;
    for (std::string_view literal : {"true", "false", "null"})
      if (starts_with(literal, word)) return true;
    return false;
  }

  std::string_view text_;
  Limits limits_;
  std::vector<Value> open_;  // the containers being read, outermost first
  size_t values_ = 0;
};

/// One of nlohmann's parse errors ("... syntax error while parsing CONTEXT -
/// DETAIL[; expected TOKEN]") in our words, at the byte where it happened.
Error Builder::translate(size_t position, const std::string& last_token,
                         const nlohmann::detail::exception& ex) const {
  if (ex.id == 406)  // a float beyond the range of double
    return Error(Error::Category::Range, "a number is beyond the range of a 64-bit float",
                 std::nullopt);
  const std::string what = ex.what();
  const size_t dash = what.find(" - ", what.find("syntax error while parsing "));
  const std::string detail = dash == std::string::npos ? what : what.substr(dash + 3);
  static const std::pair<const char*, const char*> kExpected[] = {
      {"; expected end of input", ""},
      {"; expected '[', '{', or a literal", "a value"},
      {"; expected string literal", "a member name in quotes"},
      {"; expected ':'", "':'"},
      {"; expected ']'", "',' or ']'"},
      {"; expected '}'", "',' or '}'"},
  };
  std::string expected = "a value";
  bool after_the_value = false;
  for (const auto& [suffix, ours] : kExpected)
    if (ends_with(detail, suffix)) {
      expected = ours;
      after_the_value = expected.empty();
    }
  // The position counts the bytes read, the end of the text as one more.
  size_t at = std::min(position, text_.size() + 1);
  const bool token = starts_with(detail, "unexpected ");
  if (token) {  // a whole token that does not belong here: at its start
    // nlohmann keeps the text of a number or string token, not of the others.
    const size_t n = starts_with(detail, "unexpected number literal") ||
                             starts_with(detail, "unexpected string literal")
                         ? last_token.size()
                     : starts_with(detail, "unexpected false literal") ? 5
                     : starts_with(detail, "unexpected true literal") ||
                             starts_with(detail, "unexpected null literal")
                         ? 4
                         : 1;  // a bracket, ',', ':' or the end
    at -= std::min(at, n);
  } else {  // a lexer error: at the byte where it stopped
    at = at ? at - 1 : 0;
  }
  at = std::min(at, text_.size());
  if (after_the_value)
    return Error(Error::Category::Syntax, "unexpected text after the JSON value", at);
  if (token && at >= text_.size())
    return Error(Error::Category::Syntax, "expected " + expected + " but the header ends", at);
  if (!token) {
    const std::string lexer = detail.substr(0, detail.find("; last read: '"));
    if (lexer != "invalid literal" || at >= text_.size() || partial_literal_before(at))
      return Error(Error::Category::Syntax, lexer_message(lexer), at);
  }
  const char c = text_[at];
  const bool printable = c >= 0x20 && c < 0x7F;
  return Error(Error::Category::Syntax,
               std::string("unexpected ") + (printable ? "'" + std::string(1, c) + "'" : "byte") +
                   "; expected " + expected,
               at);
}

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

Value parse(std::string_view text, const Limits& limits) {
  // nlohmann skips a byte order mark; RFC 8259 text has none.
  if (starts_with(text, "\xEF\xBB\xBF"))
    throw Error(Error::Category::Syntax, "unexpected byte; expected a value", 0);
  Builder builder(text, limits);
  const bool ok = nlohmann::json::sax_parse(text.begin(), text.end(), &builder);
  if (builder.error) throw *builder.error;
  if (!ok) throw Error(Error::Category::Syntax, "invalid JSON", std::nullopt);
  return std::move(builder.root);
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
