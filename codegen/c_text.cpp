#include "codegen/c_text.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

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
      if (std::isnan(value))
        return CExpr{"std::numeric_limits<" + std::string(c_type) + ">::quiet_NaN()", kPrecPrimary};
      if (std::isinf(value))
        return CExpr{
            std::string(value < 0 ? "-" : "") + "std::numeric_limits<" + c_type + ">::infinity()",
            value < 0 ? kPrecUnary : kPrecPrimary};
      if (type == ElemType::F32) return signed_text(shortest_float_text(float(value)) + "f");
      return signed_text(shortest_float_text(value));
    }
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

// ---- Identifiers --------------------------------------------------------------

bool is_reserved_identifier(const std::string& name) {
  static const std::set<std::string> reserved = {
      // C++ keywords and alternative tokens.
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
      "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
      "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
      "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
      "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
      "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
      "reinterpret_cast", "requires", "restrict", "return", "short", "signed", "sizeof", "static",
      "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
      "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
      "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
      // Names the generated code refers to unqualified, and common macros.
      "tenet", "std", "int8_t", "uint8_t", "int16_t", "int32_t", "int64_t", "uint64_t", "size_t",
      "main", "NULL", "EOF", "INFINITY", "NAN", "assert", "errno", "offsetof", "workspace", "sizes",
      "buffers"};
  if (reserved.count(name)) return true;
  // Identifiers with a double underscore or _Capital are the implementation's.
  if (name.find("__") != std::string::npos) return true;
  return name.size() >= 2 && name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1]));
}

std::string output_name(const ir::Function& fn, size_t i) {
  return i < fn.output_names.size() && !fn.output_names[i].empty() ? fn.output_names[i]
                                                                   : fn.outputs[i]->name;
}

std::string sanitize_identifier(const std::string& name) {
  std::string out;
  for (char c : name) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    out += ok ? c : '_';
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "t" + out;
  return out;
}

Namer::Namer() = default;

std::string Namer::take(const std::string& wanted) {
  std::string base = sanitize_identifier(wanted);
  // Collapse runs of '_' that sanitising or suffixing could create ("a__1" is reserved).
  std::string collapsed;
  for (char c : base)
    if (!(c == '_' && !collapsed.empty() && collapsed.back() == '_')) collapsed += c;
  base = collapsed;
  if (base[0] == '_') base = "v" + base;  // leading '_' names belong to the implementation
  if (is_reserved_identifier(base)) base += "_";
  std::string name = base;
  for (int n = 1; used_.count(name) || is_reserved_identifier(name); ++n)
    name = base + (base.back() == '_' ? "" : "_") + std::to_string(n);
  used_.insert(name);
  return name;
}

}  // namespace tenet::codegen::detail
