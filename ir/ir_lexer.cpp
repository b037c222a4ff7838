#include "ir/ir_lexer.h"

#include <cstdint>

namespace tenet::ir {

namespace {

bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_name_char(char c) {
  return is_alpha(c) || is_digit(c) || c == '.';
}

int hex_digit(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  explicit Lexer(const SourceFile& file) : file_(file), text_(file.text()) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    std::vector<std::string> comments;
    for (;;) {
      skip_space();
      if (pos_ >= text_.size()) break;
      char c = text_[pos_];
      if (c == '#') {
        comments.push_back(comment_line());
        continue;
      }
      if (c == '/' && peek(1) == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
        continue;
      }
      Token t = token();
      t.comments = std::move(comments);
      comments.clear();
      out.push_back(std::move(t));
    }
    Token end;
    end.span = Span::of(uint32_t(text_.size()), uint32_t(text_.size()));
    end.comments = std::move(comments);
    out.push_back(std::move(end));
    return out;
  }

 private:
  char peek(size_t ahead) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }

  // "# text" gives "text"; "#" alone gives "".
  std::string comment_line() {
    size_t begin = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    if (begin < pos_ && text_[begin] == ' ') ++begin;
    return text_.substr(begin, pos_ - begin);
  }

  [[noreturn]] void fail(size_t begin, size_t end, const std::string& message) {
    fail_at(file_, Span::of(uint32_t(begin), uint32_t(end)), message);
  }

  Token make(TokKind kind, size_t begin, std::string text) {
    Token t;
    t.kind = kind;
    t.text = std::move(text);
    t.span = Span::of(uint32_t(begin), uint32_t(pos_));
    return t;
  }

  Token token() {
    size_t begin = pos_;
    char c = text_[pos_];
    if (is_alpha(c)) {
      while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
      return make(TokKind::Ident, begin, text_.substr(begin, pos_ - begin));
    }
    if (is_digit(c)) return number(begin);
    if (c == '"') return make(TokKind::String, begin, string_body(begin));
    if (c == '%') {
      ++pos_;
      if (peek(0) == '"') return make(TokKind::Value, begin, string_body(pos_));
      size_t name_begin = pos_;
      while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
      if (pos_ == name_begin) fail(begin, pos_ + 1, "expected a value name after '%'");
      return make(TokKind::Value, begin, text_.substr(name_begin, pos_ - name_begin));
    }
    if (c == '-' && peek(1) == '>') {
      pos_ += 2;
      return make(TokKind::Punct, begin, "->");
    }
    static const std::string punct = "()[]{},:=<>?*/+-";
    if (punct.find(c) != std::string::npos) {
      ++pos_;
      return make(TokKind::Punct, begin, std::string(1, c));
    }
    unsigned char u = static_cast<unsigned char>(c);
    std::string shown = u >= 0x20 && u < 0x7f ? std::string(1, c) : "\\x" + std::to_string(u);
    fail(begin, begin + 1, "unexpected character '" + shown + "'");
  }

  // 12, 1.5, 1e-07, 2.5E+300. A name character right after a number is an error.
  Token number(size_t begin) {
    while (is_digit(peek(0))) ++pos_;
    if (peek(0) == '.' && is_digit(peek(1))) {
      ++pos_;
      while (is_digit(peek(0))) ++pos_;
    }
    if (peek(0) == 'e' || peek(0) == 'E') {
      size_t sign = (peek(1) == '+' || peek(1) == '-') ? 1 : 0;
      if (is_digit(peek(1 + sign))) {
        pos_ += 1 + sign;
        while (is_digit(peek(0))) ++pos_;
      }
    }
    if (is_name_char(peek(0))) fail(begin, pos_ + 1, "malformed number");
    return make(TokKind::Number, begin, text_.substr(begin, pos_ - begin));
  }

  // Reads a double-quoted string starting at pos_ (the opening quote).
  std::string string_body(size_t token_begin) {
    std::string out;
    ++pos_;
    for (;;) {
      if (pos_ >= text_.size() || text_[pos_] == '\n')
        fail(token_begin, pos_, "unterminated string");
      char c = text_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      char e = peek(0);
      ++pos_;
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'x': {
          int hi = hex_digit(peek(0)), lo = hex_digit(peek(1));
          if (hi < 0 || lo < 0) fail(pos_ - 2, pos_ + 2, "malformed \\x escape");
          out += char(hi * 16 + lo);
          pos_ += 2;
          break;
        }
        default:
          fail(pos_ - 2, pos_, "unknown escape in string");
      }
    }
  }

  const SourceFile& file_;
  const std::string& text_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<Token> lex_ir(const SourceFile& file) {
  return Lexer(file).run();
}

}  // namespace tenet::ir
