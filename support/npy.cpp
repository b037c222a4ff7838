#include "support/npy.h"

#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <vector>

#include "support/checked.h"
#include "support/error.h"
#include "support/read_file.h"

namespace tenet {

static_assert(std::endian::native == std::endian::little,
              ".npy data is read and written as little-endian, the host's byte order");

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr const char* kSupported = "<f2 <f4 <f8 <i2 <i4 <i8 <u2 <u4 <u8 |i1 |u1 |b1";

std::string descr_of(ElemType t) {
  switch (t) {
    case ElemType::Bool:
      return "|b1";
    case ElemType::I8:
      return "|i1";
    case ElemType::U8:
      return "|u1";
    case ElemType::I16:
      return "<i2";
    case ElemType::I32:
      return "<i4";
    case ElemType::I64:
      return "<i8";
    case ElemType::F32:
      return "<f4";
    case ElemType::F64:
      return "<f8";
    case ElemType::U16:
      return "<u2";
    case ElemType::U32:
      return "<u4";
    case ElemType::U64:
      return "<u8";
    case ElemType::F16:
      return "<f2";
  }
  return "?";
}

/// A cursor over the header, a Python dict literal such as
///   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  std::string descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<int64_t>> shape;

  void parse() {
    expect('{');
    while (!accept('}')) {
      std::string key = string_literal();
      expect(':');
      if (key == "descr") {
        descr = string_literal();
      } else if (key == "fortran_order") {
        fortran_order = boolean();
      } else if (key == "shape") {
        shape = tuple();
      } else {
        fail("unknown header key '" + key + "'");
      }
      if (!accept(',')) {
        expect('}');
        break;
      }
    }
    if (descr.empty()) fail("no 'descr'");
    if (!fortran_order) fail("no 'fortran_order'");
    if (!shape) fail("no 'shape'");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw BindError("cannot read '" + name_ + "': malformed .npy header (" + what + ")");
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!accept(c)) fail(std::string("expected '") + c + "'");
  }
  std::string string_literal() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      fail("expected a string");
    char quote = text_[pos_++];
    size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  bool boolean() {
    skip_space();
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (text_.substr(pos_, std::strlen(word)) == word) {
        pos_ += std::strlen(word);
        return value;
      }
    }
    fail("expected True or False");
  }
  std::vector<int64_t> tuple() {
    expect('(');
    std::vector<int64_t> dims;
    while (!accept(')')) {
      skip_space();
      int64_t v = 0;
      size_t start = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) fail("dimension too large");
        v = v * 10 + (text_[pos_++] - '0');
      }
      if (pos_ == start) fail("expected a dimension");
      if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2 longs
      dims.push_back(v);
      if (!accept(',')) {
        expect(')');
        break;
      }
    }
    return dims;
  }

  std::string_view text_;
  const std::string& name_;
  size_t pos_ = 0;
};

ElemType dtype_of(const std::string& descr, const std::string& name) {
  auto fail = [&](const std::string& what) -> ElemType {
    throw BindError("cannot read '" + name + "': " + what);
  };
  if (descr.size() < 2)
    return fail("unsupported dtype '" + descr + "' (supported: " + kSupported + ")");
  char order = descr[0];
  std::string kind = descr.substr(1);
  bool one_byte = kind == "i1" || kind == "u1" || kind == "b1";
  if (order == '>' && !one_byte)
    return fail("big-endian data ('" + descr + "') is not supported; save arr.astype('<" + kind +
                "')");
  bool order_ok = order == '<' || order == '=' || (one_byte && (order == '|' || order == '>'));
  if (order_ok) {
    if (kind == "f4") return ElemType::F32;
    if (kind == "f8") return ElemType::F64;
    if (kind == "i2") return ElemType::I16;
    if (kind == "i4") return ElemType::I32;
    if (kind == "i8") return ElemType::I64;
    if (kind == "i1") return ElemType::I8;
    if (kind == "u1") return ElemType::U8;
    if (kind == "b1") return ElemType::Bool;
    if (kind == "u2") return ElemType::U16;
    if (kind == "u4") return ElemType::U32;
    if (kind == "u8") return ElemType::U64;
    if (kind == "f2") return ElemType::F16;
  }
  return fail("unsupported dtype '" + descr + "' (supported: " + kSupported + ")");
}

uint64_t read_le(std::string_view bytes, size_t offset, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | uint8_t(bytes[offset + size_t(i)]);
  return v;
}

}  // namespace

Tensor parse_npy(std::string_view bytes, const std::string& name) {
  auto fail = [&](const std::string& what) -> Tensor {
    throw BindError("cannot read '" + name + "': " + what);
  };
  if (bytes.empty()) return fail("empty file");
  if (bytes.size() < kMagic.size() && kMagic.substr(0, bytes.size()) == bytes)
    return fail("truncated header");
  if (bytes.substr(0, kMagic.size()) != kMagic) return fail("not a .npy file (bad magic)");
  if (bytes.size() < 10) return fail("truncated header");
  int major = uint8_t(bytes[6]), minor = uint8_t(bytes[7]);
  if (major < 1 || major > 3)
    return fail("unsupported .npy version " + std::to_string(major) + "." + std::to_string(minor));
  size_t preamble = major == 1 ? 10 : 12;
  if (bytes.size() < preamble) return fail("truncated header");
  size_t header_len = size_t(read_le(bytes, 8, major == 1 ? 2 : 4));
  if (bytes.size() - preamble < header_len) return fail("truncated header");

  HeaderParser header(bytes.substr(preamble, header_len), name);
  header.parse();
  ElemType type = dtype_of(header.descr, name);
  if (*header.fortran_order)
    return fail("Fortran-order data is not supported; save np.ascontiguousarray(arr)");

  const std::vector<int64_t>& shape = *header.shape;
  std::string_view data = bytes.substr(preamble + header_len);
  int64_t want_bytes = 0;
  try {
    want_bytes = check_tensor_bytes("the " + std::string(type_name(type)) + " data", type, shape);
  } catch (const BindError& e) {
    return fail(e.what());
  }
  const int64_t numel = want_bytes / byte_size(type);
  const uint64_t want = uint64_t(want_bytes);
  std::string described = std::string(type_name(type)) + "[";
  for (size_t i = 0; i < shape.size(); ++i) described += (i ? ", " : "") + std::to_string(shape[i]);
  described += "]";
  if (data.size() < want)
    return fail("truncated: " + described + " needs " + std::to_string(want) +
                " bytes of data, the file has " + std::to_string(data.size()));
  if (data.size() > want)
    return fail(std::to_string(data.size() - want) + " unexpected bytes after the data of " +
                described);
  Tensor t(type, shape);
  if (type == ElemType::Bool) {
    for (int64_t i = 0; i < numel; ++i) t.set(i, data[size_t(i)] != 0);
  } else if (want > 0) {
    std::memcpy(t.raw(), data.data(), size_t(want));
  }
  return t;
}

std::string to_npy(const Tensor& t) {
  std::ostringstream header;
  header << "{'descr': '" << descr_of(t.type()) << "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.shape().size(); ++i) header << (i ? ", " : "") << t.shape()[i];
  header << (t.shape().size() == 1 ? ",), }" : "), }");
  std::string text = header.str();
  // Pad with spaces and end with a newline so the data starts 64-byte aligned.
  bool v1 = text.size() + 1 + 10 <= 65535;
  size_t preamble = v1 ? 10 : 12;
  size_t total = (preamble + text.size() + 1 + 63) / 64 * 64;
  text.append(total - preamble - text.size() - 1, ' ');
  text += '\n';

  std::string out(kMagic);
  out += char(v1 ? 1 : 2);
  out += char(0);
  size_t len = text.size();
  for (size_t i = 0; i < (v1 ? 2u : 4u); ++i) out += char((len >> (8 * i)) & 0xff);
  out += text;
  if (t.type() == ElemType::Bool) {
    for (int64_t i = 0; i < t.numel(); ++i) out += char(t.get(i) != 0 ? 1 : 0);
  } else {
    out.append(static_cast<const char*>(t.raw()), t.nbytes());
  }
  return out;
}

Tensor read_npy(const std::string& path) {
  std::string why;  // only a regular file: /dev/zero would be read without end
  std::optional<std::string> bytes = read_regular_file(path, why);
  if (!bytes) throw BindError("cannot read '" + path + "': " + why);
  return parse_npy(*bytes, path);
}

void write_npy(const std::string& path, const Tensor& t) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw BindError("cannot write '" + path + "': " + std::strerror(errno));
  std::string bytes = to_npy(t);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  out.flush();
  if (!out) throw BindError("cannot write '" + path + "': write error");
}

}  // namespace tenet
