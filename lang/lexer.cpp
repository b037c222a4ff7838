#include "lang/lexer.h"

#include <charconv>
#include <cstdio>
#include <system_error>

namespace tenet::lang {

namespace {

bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_name_char(char c) {
  return is_name_start(c) || is_digit(c);
}
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Printable ASCII as itself, anything else as \xNN, so that a diagnostic
// never carries raw control bytes.
std::string show_char(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string(1, c);
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02X", u);
  return buf;
}

class Lexer {
 public:
  explicit Lexer(const SourceFile& file) : text_(file.text()) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    uint32_t last_end = 0;
    while (true) {
      skip_space_and_comments();
      if (pos_ >= text_.size()) break;
      Token t = next();
      bool stop = t.kind == TokenKind::Error;
      last_end = t.span.end;
      tokens.push_back(std::move(t));
      if (stop) return tokens;
    }
    Token end;
    end.kind = TokenKind::End;
    end.span = Span::of(last_end, last_end);
    tokens.push_back(std::move(end));
    return tokens;
  }

 private:
  char at(size_t i) const { return i < text_.size() ? text_[i] : '\0'; }

  void skip_space_and_comments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (is_space(c)) {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }

  Token make(TokenKind kind, size_t begin, size_t end) {
    Token t;
    t.kind = kind;
    t.span = Span::of(uint32_t(begin), uint32_t(end));
    t.text = std::string_view(text_).substr(begin, end - begin);
    pos_ = end;
    return t;
  }

  Token error(size_t begin, size_t end, std::string message) {
    Token t = make(TokenKind::Error, begin, end);
    t.error = std::move(message);
    return t;
  }

  Token next() {
    size_t b = pos_;
    char c = text_[b];
    if (is_name_start(c)) return name(b);
    if (is_digit(c) || (c == '.' && is_digit(at(b + 1)))) return number(b);
    auto one = [&](TokenKind k) { return make(k, b, b + 1); };
    auto two = [&](TokenKind k) { return make(k, b, b + 2); };
    char n = at(b + 1);
    switch (c) {
      case '(':
        return one(TokenKind::LParen);
      case ')':
        return one(TokenKind::RParen);
      case '{':
        return one(TokenKind::LBrace);
      case '}':
        return one(TokenKind::RBrace);
      case ',':
        return one(TokenKind::Comma);
      case ':':
        return one(TokenKind::Colon);
      case ';':
        return one(TokenKind::Semicolon);
      case '?':
        return one(TokenKind::Question);
      case '*':
        if (n == '=' && at(b + 2) == '!') return make(TokenKind::ProdReduce, b, b + 3);
        if (n == '=') return two(TokenKind::ProdAccumulate);
        return one(TokenKind::Star);
      case '/':
        return one(TokenKind::Slash);
      case '%':
        return one(TokenKind::Percent);
      case '+':
        if (n == '=' && at(b + 2) == '!') return make(TokenKind::SumReduce, b, b + 3);
        if (n == '=') return two(TokenKind::Accumulate);
        return one(TokenKind::Plus);
      case '-':
        return n == '>' ? two(TokenKind::Arrow) : one(TokenKind::Minus);
      case '<':
        if (n == '=' && at(b + 2) == '>') return make(TokenKind::Equivalent, b, b + 3);
        return n == '=' ? two(TokenKind::LessEq) : one(TokenKind::Less);
      case '>':
        return n == '=' ? two(TokenKind::GreaterEq) : one(TokenKind::Greater);
      case '=':
        return n == '=' ? two(TokenKind::EqEq) : one(TokenKind::Assign);
      case '!':
        return n == '=' ? two(TokenKind::NotEq) : one(TokenKind::Not);
      case '&':
        if (n == '&') return two(TokenKind::AndAnd);
        return error(b, b + 1, "unexpected character '&' (did you mean '&&'?)");
      case '|':
        if (n == '|') return two(TokenKind::OrOr);
        return error(b, b + 1, "unexpected character '|' (did you mean '||'?)");
      default:
        return error(b, b + 1, "unexpected character '" + show_char(c) + "'");
    }
  }

  Token name(size_t b) {
    size_t e = b;
    while (e < text_.size() && is_name_char(text_[e])) ++e;
    std::string_view word = std::string_view(text_).substr(b, e - b);
    // max=!, min=!, max= and min= are single tokens only when written together.
    if ((word == "max" || word == "min") && at(e) == '=' && at(e + 1) == '!')
      return make(word == "max" ? TokenKind::MaxReduce : TokenKind::MinReduce, b, e + 2);
    if ((word == "max" || word == "min") && at(e) == '=' && at(e + 1) != '=')
      return make(word == "max" ? TokenKind::MaxAccumulate : TokenKind::MinAccumulate, b, e + 1);
    if (word == "def") return make(TokenKind::KwDef, b, e);
    if (word == "for") return make(TokenKind::KwFor, b, e);
    if (word == "in") return make(TokenKind::KwIn, b, e);
    if (word == "where") return make(TokenKind::KwWhere, b, e);
    if (auto type = parse_type_name(word)) {
      Token t = make(TokenKind::Type, b, e);
      t.type = *type;
      return t;
    }
    return make(TokenKind::Name, b, e);
  }

  // digits ['.' digits] [('e'|'E') ['+'|'-'] digits], or '.' digits [exponent].
  Token number(size_t b) {
    size_t e = b;
    bool integer = true;
    while (is_digit(at(e))) ++e;
    if (at(e) == '.') {
      integer = false;
      ++e;
      while (is_digit(at(e))) ++e;
    }
    bool bad_exponent = false;
    if (at(e) == 'e' || at(e) == 'E') {
      integer = false;
      ++e;
      if (at(e) == '+' || at(e) == '-') ++e;
      bad_exponent = !is_digit(at(e));
      while (is_digit(at(e))) ++e;
    }
    // A number runs into a name or another '.': "12ab", "1.2.3", "1e".
    size_t run = e;
    while (is_name_char(at(run)) || at(run) == '.') ++run;
    std::string_view whole = std::string_view(text_).substr(b, run - b);
    if (bad_exponent && run == e)
      return error(b, e,
                   "malformed number '" + std::string(whole) + "': the exponent has no digits");
    if (run != e) return error(b, run, "malformed number '" + std::string(whole) + "'");
    Token t = make(TokenKind::Number, b, e);
    auto [ptr, ec] = std::from_chars(text_.data() + b, text_.data() + e, t.number);
    if (ec == std::errc::result_out_of_range)
      return error(b, e, "number '" + std::string(whole) + "' is out of range");
    if (ec != std::errc() || ptr != text_.data() + e)
      return error(b, e, "malformed number '" + std::string(whole) + "'");
    t.is_integer = integer;
    return t;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<Token> lex(const SourceFile& file) {
  return Lexer(file).run();
}

std::string describe(const Token& token) {
  if (token.kind == TokenKind::End) return "end of file";
  constexpr size_t kMaxShown = 40;
  std::string shown;
  for (char c : token.text.substr(0, kMaxShown)) shown += show_char(c);
  if (token.text.size() > kMaxShown) shown += "...";
  return "'" + shown + "'";
}

}  // namespace tenet::lang
