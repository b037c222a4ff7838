#include "codegen/c_text.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

#include "support/error.h"

namespace tenet::codegen::detail {

std::string wrap(const CExpr& e, int min_prec) {
  return e.prec < min_prec ? "(" + e.text + ")" : e.text;
}

namespace {

/// Shortest round-trip text of a float or double, with a C++-friendly exponent
/// ("1e-07" -> "1e-7") and always a '.' or exponent so it stays floating.
template <typename T>
std::string shortest_float_text(T v) {
  std::array<char, 64> buf{};
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  TENET_ASSERT(ec == std::errc(), "cannot format a float literal");
  std::string s(buf.data(), end);
  size_t e = s.find('e');
  if (e != std::string::npos) {
    std::string mantissa = s.substr(0, e);
    std::string exponent = s.substr(e + 1);
    bool negative = !exponent.empty() && exponent[0] == '-';
    if (!exponent.empty() && (exponent[0] == '-' || exponent[0] == '+')) exponent.erase(0, 1);
    while (exponent.size() > 1 && exponent[0] == '0') exponent.erase(0, 1);
    return mantissa + "e" + (negative ? "-" : "") + exponent;
  }
  if (s.find('.') == std::string::npos) s += ".0";
  return s;
}

CExpr signed_text(std::string text) {
  bool negative = !text.empty() && text[0] == '-';
  return CExpr{std::move(text), negative ? kPrecUnary : kPrecPrimary};
}

}  // namespace

CExpr literal(double value, ElemType type) {
  switch (type) {
    case ElemType::Bool:
      return CExpr{value != 0 ? "true" : "false", kPrecPrimary};
    case ElemType::F32:
    case ElemType::F64: {
      const char* c_type = type == ElemType::F32 ? "float" : "double";
      // The value the type holds: a double beyond float's range is infinite.
      if (type == ElemType::F32) value = double(float(value));
      if (std::isnan(value))
        return CExpr{"std::numeric_limits<" + std::string(c_type) + ">::quiet_NaN()", kPrecPrimary};
      if (std::isinf(value))
        return CExpr{
            std::string(value < 0 ? "-" : "") + "std::numeric_limits<" + c_type + ">::infinity()",
            value < 0 ? kPrecUnary : kPrecPrimary};
      if (type == ElemType::F32) return signed_text(shortest_float_text(float(value)) + "f");
      return signed_text(shortest_float_text(value));
    }
    case ElemType::U32:  // unsigned literals keep uint32 and uint64 arithmetic unsigned
      return CExpr{std::to_string(uint32_t(value)) + "u", kPrecPrimary};
    case ElemType::U64:
      return CExpr{std::to_string(uint64_t(value)) + "ull", kPrecPrimary};
    default: {
      // Integer constants are whole numbers in range (the checker made them so).
      if (value <= double(std::numeric_limits<int64_t>::lowest()))
        return CExpr{"std::numeric_limits<int64_t>::lowest()", kPrecPrimary};
      if (value >= 9.2233720368547758e18)
        return CExpr{"std::numeric_limits<int64_t>::max()", kPrecPrimary};
      return signed_text(std::to_string(int64_t(value)));
    }
  }
}

std::string c_string_literal(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20 || c == 0x7f) {
      static const char* octal = "01234567";
      out += "\\";
      out += octal[(c >> 6) & 7];
      out += octal[(c >> 3) & 7];
      out += octal[c & 7];
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

std::string comment_text(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else if (c == '*' && i + 1 < text.size() && text[i + 1] == '/') {
      out += "*\\";  // "*/" would end a /* */ comment
    } else {
      out += char(c);
    }
  }
  return out;
}

// ---- Identifiers --------------------------------------------------------------

std::string output_name(const ir::Function& fn, size_t i) {
  return i < fn.output_names.size() && !fn.output_names[i].empty() ? fn.output_names[i]
                                                                   : fn.outputs[i]->name;
}

bool is_updated_input(const ir::Function& fn, size_t k) {
  for (size_t i = 0; i < fn.outputs.size(); ++i)
    if (fn.updated_input(i) == int(k)) return true;
  return false;
}

namespace {

/// Characters other than letters, digits and '_' as '_'; runs of '_' as one.
std::string identifier_chars(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    if (!(c == '_' && !out.empty() && out.back() == '_')) out += c;
  }
  return out;
}

}  // namespace

std::string sanitize_identifier(const std::string& name) {
  std::string out = identifier_chars(name);
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v" + out;
  return out;
}

std::string Namer::take(const std::string& program_name) {
  // The prefix ends in '_', so a leading '_' of the name would make "__".
  std::string name = identifier_chars(program_name);
  if (!name.empty() && name[0] == '_') name.erase(0, 1);
  return take_free(kNamePrefix + name);
}

std::string Namer::take_derived(const std::string& base) {
  return take_free(sanitize_identifier(base));
}

std::string Namer::take_free(const std::string& base) {
  std::string name = base;
  for (int n = 1; used_.count(name); ++n)
    name = base + (base.back() == '_' ? "" : "_") + std::to_string(n);
  used_.insert(name);
  return name;
}

std::vector<std::string> words_of(const std::string& text) {
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (size_t at = 0; at < text.size();) {
    if (!is_word(text[at])) {
      ++at;
      continue;
    }
    size_t end = at;
    while (end < text.size() && is_word(text[end])) ++end;
    std::string word = text.substr(at, end - at);
    if (seen.insert(word).second) out.push_back(std::move(word));
    at = end;
  }
  return out;
}

}  // namespace tenet::codegen::detail
