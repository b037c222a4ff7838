#include "train/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "support/checked.h"
#include "support/error.h"
#include "support/read_file.h"
#include "support/temp_files.h"
#include "train/json.h"

namespace tenet::train {

// (std::endian is C++20; standalone projects build this file as C++17.)
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; this runtime copies it as is");

namespace {

// The reference implementation refuses headers above 100 MB; so do we.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DtypeName {
  ElemType type;
  const char* name;
};
constexpr DtypeName kDtypes[] = {
    {ElemType::Bool, "BOOL"}, {ElemType::U8, "U8"},   {ElemType::I8, "I8"},
    {ElemType::I16, "I16"},   {ElemType::I32, "I32"}, {ElemType::I64, "I64"},
    {ElemType::F32, "F32"},   {ElemType::F64, "F64"},
};
// Valid safetensors dtypes this runtime has no element type for.
constexpr const char* kUnsupportedDtypes[] = {"F16",     "BF16",    "U16",     "U32",
                                              "U64",     "F8_E4M3", "F8_E5M2", "F8_E8M0",
                                              "F6_E2M3", "F6_E3M2", "F4",      "C64"};

const char* dtype_name(ElemType t) {
  for (const DtypeName& d : kDtypes)
    if (d.type == t) return d.name;
  return nullptr;
}

std::string supported_list() {
  std::string s;
  for (const DtypeName& d : kDtypes) s += (s.empty() ? "" : " ") + std::string(d.name);
  return s;
}

std::string errno_text() {
  return std::strerror(errno);
}

// ---- writing -------------------------------------------------------------

/// `s` as a JSON string literal; a BindError naming `what` unless `s` is UTF-8.
std::string quoted(const std::string& s, const std::string& what) {
  // Readers refuse a header that is not UTF-8.
  if (!json::is_utf8(s)) throw BindError("safetensors: " + what + " is not valid UTF-8");
  return json::quote(s);
}

void check_names(const NamedTensors& tensors) {
  std::set<std::string> seen;
  for (const NamedTensor& t : tensors) {
    if (t.name.empty()) throw BindError("safetensors: a tensor has an empty name");
    if (t.name == "__metadata__")
      throw BindError("safetensors: '__metadata__' is reserved and cannot name a tensor");
    if (!seen.insert(t.name).second)
      throw BindError("safetensors: tensor name '" + printable(t.name) + "' appears twice");
    TENET_ASSERT(dtype_name(t.tensor.type()),
                 "no safetensors dtype for " << type_name(t.tensor.type()));
  }
}

std::string header_json(const NamedTensors& tensors, const Metadata& metadata) {
  std::ostringstream os;
  os << '{';
  bool first = true;
  if (!metadata.empty()) {
    os << "\"__metadata__\":{";
    for (auto it = metadata.begin(); it != metadata.end(); ++it)
      os << (it == metadata.begin() ? "" : ",") << quoted(it->first, "metadata key") << ':'
         << quoted(it->second, "metadata '" + it->first + "'");
    os << '}';
    first = false;
  }
  uint64_t offset = 0;
  for (const NamedTensor& t : tensors) {
    os << (first ? "" : ",") << quoted(t.name, "a tensor name") << ":{\"dtype\":\""
       << dtype_name(t.tensor.type()) << "\",\"shape\":[";
    for (int d = 0; d < t.tensor.rank(); ++d) os << (d ? "," : "") << t.tensor.shape()[size_t(d)];
    os << "],\"data_offsets\":[" << offset << ',' << offset + t.tensor.nbytes() << "]}";
    offset += t.tensor.nbytes();
    first = false;
  }
  os << '}';
  return os.str();
}

// ---- reading -------------------------------------------------------------

/// A duplicate key of the header, in the words of the safetensors format.
std::string duplicate(const json::Error& e) {
  const std::string key = printable(e.key);
  if (e.path.empty()) return "'" + key + "' appears twice in the header";
  if (e.path.size() == 1 && e.path[0] == "__metadata__")
    return "metadata '" + key + "' appears twice";
  if (e.path.size() == 1)
    return "tensor '" + printable(e.path[0]) + "' has field '" + key + "' twice";
  return "'" + key + "' appears twice in an object of the header";
}

class HeaderReader {
 public:
  HeaderReader(std::string_view bytes, const std::string& name) : bytes_(bytes), name_(name) {}

  SafetensorsFile read() {
    if (bytes_.size() < 8)
      fail("the file is " + std::to_string(bytes_.size()) +
           " bytes, shorter than the 8-byte header length");
    uint64_t header_len = 0;
    std::memcpy(&header_len, bytes_.data(), 8);
    if (header_len > bytes_.size() - 8)
      fail("the header length " + std::to_string(header_len) + " exceeds the " +
           std::to_string(bytes_.size() - 8) + " bytes after the length field");
    if (header_len > kMaxHeaderBytes)
      fail("the header length " + std::to_string(header_len) + " exceeds 100 MB");
    const std::string_view header = bytes_.substr(8, header_len);
    if (header.empty() || header[0] != '{') fail("the header does not start with '{'");
    data_ = bytes_.substr(8 + header_len);

    json::Value root;
    try {
      root = json::parse(header);
    } catch (const json::Error& e) {
      switch (e.category) {
        case json::Error::Category::Duplicate:
          fail(duplicate(e));
        case json::Error::Category::Depth:
          fail("the header is " + std::string(e.what()));
        case json::Error::Category::Size:
          fail("the header " + std::string(e.what()));
        default:
          fail("invalid JSON in the header" +
               (e.offset ? " at byte " + std::to_string(8 + *e.offset) : std::string()) + ": " +
               e.what());
      }
    }
    const size_t tensors = root.members.size() - (root.find("__metadata__") ? 1 : 0);
    if (tensors > kMaxSafetensorsTensors)
      fail("the header describes " + std::to_string(tensors) + " tensors, more than the " +
           std::to_string(kMaxSafetensorsTensors) + " a file may hold");
    SafetensorsFile file;
    std::vector<Entry> entries;
    entries.reserve(tensors);
    for (const auto& [key, value] : root.members) {
      if (key == "__metadata__")
        file.metadata = metadata(value);
      else
        entries.push_back(entry(key, value));
    }
    check_layout(entries);
    for (const Entry& e : entries) file.tensors.push_back({e.name, copy(e)});
    return file;
  }

 private:
  struct Entry {
    std::string name;
    ElemType type;
    std::vector<int64_t> shape;
    uint64_t begin, end;
  };

  [[noreturn]] void fail(const std::string& what) const {
    throw BindError(name_ + ": invalid safetensors file: " + what);
  }

  Metadata metadata(const json::Value& v) const {
    if (!v.is_object())
      fail(std::string("'__metadata__' must be an object of strings, not ") + v.kind_name());
    Metadata m;
    for (const auto& [key, value] : v.members) {
      if (!value.is_string())
        fail("metadata '" + printable(key) + "' must be a string, not " + value.kind_name());
      m.emplace(key, value.text);  // keys are unique (json::parse)
    }
    return m;
  }

  Entry entry(const std::string& name, const json::Value& v) const {
    const std::string what = "tensor '" + printable(name) + "'";
    if (!v.is_object()) fail(what + " must be described by an object, not " + v.kind_name());
    for (const auto& [key, value] : v.members)
      if (key != "dtype" && key != "shape" && key != "data_offsets")
        fail(what + " has an unknown field '" + printable(key) + "'");
    for (const char* field : {"dtype", "shape", "data_offsets"})
      if (!v.find(field)) fail(what + " lacks '" + field + "'");
    const json::Value& dtype = *v.find("dtype");
    Entry e{name, element_type(what, dtype), {}, 0, 0};
    e.shape = dimensions(what, *v.find("shape"));
    const std::vector<uint64_t> range = integers(what, "data_offsets", *v.find("data_offsets"));
    if (range.size() != 2) fail(what + ": 'data_offsets' must hold 2 integers");
    e.begin = range[0];
    e.end = range[1];
    if (e.begin > e.end)
      fail(what + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
           "] end before they begin");
    if (e.end > data_.size())
      fail(what + ": data_offsets end at " + std::to_string(e.end) + ", beyond the " +
           std::to_string(data_.size()) + "-byte data buffer");
    uint64_t expected = 0;
    try {
      expected = uint64_t(check_tensor_bytes(what, e.type, e.shape));
    } catch (const BindError& size) {
      fail(size.what());
    }
    if (e.end - e.begin != expected)
      fail(what + ": " + dtype.text + " of shape " + shape_text(e.shape) + " needs " +
           std::to_string(expected) + " bytes, but data_offsets cover " +
           std::to_string(e.end - e.begin));
    return e;
  }

  static std::string shape_text(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
  }

  ElemType element_type(const std::string& what, const json::Value& v) const {
    if (!v.is_string()) fail(what + ": 'dtype' must be a string, not " + v.kind_name());
    const std::string& name = v.text;
    for (const DtypeName& d : kDtypes)
      if (name == d.name) return d.type;
    for (const char* u : kUnsupportedDtypes)
      if (name == u)
        fail(what + ": dtype " + name + " is not supported (supported: " + supported_list() + ")");
    fail(what + ": unknown dtype '" + printable(name) + "'");
  }

  std::vector<uint64_t> integers(const std::string& what, const char* field,
                                 const json::Value& v) const {
    if (!v.is_array()) fail(what + ": '" + field + "' must be an array, not " + v.kind_name());
    std::vector<uint64_t> out;
    for (const json::Value& item : v.items) {
      // Plain non-negative integers below 2^64: not -1, 1.5, 1e2 or 2^64.
      const std::optional<uint64_t> n = item.as_uint64();
      if (!n)
        fail(what + ": '" + field + "' must hold non-negative integers, found " +
             (item.is_number() ? item.text : std::string(item.kind_name())));
      out.push_back(*n);
    }
    return out;
  }

  std::vector<int64_t> dimensions(const std::string& what, const json::Value& v) const {
    std::vector<int64_t> shape;
    for (uint64_t d : integers(what, "shape", v)) {
      if (d > uint64_t(INT64_MAX)) fail(what + ": dimension " + std::to_string(d) + " too large");
      shape.push_back(int64_t(d));
    }
    return shape;
  }

  // Sorted by offset, the tensors must tile the data buffer exactly.
  void check_layout(std::vector<Entry>& entries) const {
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    uint64_t at = 0;
    const Entry* previous = nullptr;
    for (const Entry& e : entries) {
      if (e.begin < at)
        fail("tensor '" + printable(e.name) + "' (bytes " + std::to_string(e.begin) + ".." +
             std::to_string(e.end) + ") overlaps tensor '" + printable(previous->name) +
             "' (bytes " + std::to_string(previous->begin) + ".." + std::to_string(previous->end) +
             ")");
      if (e.begin > at)
        fail("bytes " + std::to_string(at) + ".." + std::to_string(e.begin) +
             " of the data buffer belong to no tensor (before tensor '" + printable(e.name) + "')");
      at = e.end;
      previous = &e;
    }
    if (at != data_.size())
      fail(std::to_string(data_.size() - at) +
           " bytes at the end of the data buffer belong to "
           "no tensor");
  }

  Tensor copy(const Entry& e) const {
    Tensor t(e.type, e.shape);
    std::memcpy(t.raw(), data_.data() + e.begin, e.end - e.begin);
    if (e.type == ElemType::Bool) {
      const auto* b = reinterpret_cast<const unsigned char*>(data_.data() + e.begin);
      for (uint64_t i = 0; i < e.end - e.begin; ++i)
        if (b[i] > 1) fail("tensor '" + printable(e.name) + "': BOOL value other than 0 or 1");
    }
    return t;
  }

  std::string_view bytes_, data_;
  std::string name_;
};

std::string read_whole_file(const std::string& path) {
  std::string why;  // only a regular file: /dev/zero would be read without end
  std::optional<std::string> bytes = read_regular_file(path, why);
  if (!bytes) throw BindError(path + ": cannot open: " + why);
  return std::move(*bytes);
}

/// A save replaces a regular file or makes a new one, and nothing else: a
/// rename over a symbolic link, FIFO or device node (/dev/null, as root)
/// would replace it with our file.
void check_replaceable(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return;
  throw BindError(path + ": will not write over " + file_kind(st.st_mode) +
                  " (a save replaces only a regular file or makes a new one)");
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7F) {
      out += c;
      continue;
    }
    char code[8];
    std::snprintf(code, sizeof code, "\\x%02X", unsigned(byte));
    out += code;
  }
  return out;
}

std::string to_safetensors(const NamedTensors& tensors, const Metadata& metadata) {
  check_names(tensors);
  std::string header = header_json(tensors, metadata);
  header.append((8 - (8 + header.size()) % 8) % 8, ' ');  // data starts 8-byte aligned
  std::string out(8, '\0');
  const uint64_t len = header.size();
  std::memcpy(out.data(), &len, 8);
  out += header;
  for (const NamedTensor& t : tensors)
    out.append(static_cast<const char*>(t.tensor.raw()), t.tensor.nbytes());
  return out;
}

SafetensorsFile parse_safetensors(std::string_view bytes, const std::string& name) {
  return HeaderReader(bytes, name).read();
}

void write_safetensors(const std::string& path, const NamedTensors& tensors,
                       const Metadata& metadata) {
  write_file_atomically(path, to_safetensors(tensors, metadata));
}

SafetensorsFile read_safetensors(const std::string& path) {
  return parse_safetensors(read_whole_file(path), path);
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  check_replaceable(path);
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  // Temporaries of processes killed mid-write are removed; ours names this
  // process (support/temp_files.h) so that a later one can do the same.
  remove_stale_temporaries(path);
  std::string tmp = temporary_prefix(path) + "XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw BindError(path + ": cannot create a temporary file: " + errno_text());
  const auto fail = [&](const std::string& what) {
    const std::string reason = errno_text();
    ::close(fd);
    ::unlink(tmp.c_str());
    throw BindError(path + ": " + what + ": " + reason);
  };
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write failed");
    done += size_t(n);
  }
  if (::fchmod(fd, 0644) != 0) fail("chmod failed");
  if (::fsync(fd) != 0) fail("fsync failed");
  if (::close(fd) != 0) {
    const std::string reason = errno_text();
    ::unlink(tmp.c_str());
    throw BindError(path + ": close failed: " + reason);
  }
  try {  // again: it may have been made while we wrote
    check_replaceable(path);
  } catch (const BindError&) {
    ::unlink(tmp.c_str());
    throw;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string reason = errno_text();
    ::unlink(tmp.c_str());
    throw BindError(path + ": cannot rename the temporary file into place: " + reason);
  }
  // Make the rename itself durable; failure here leaves a complete file, so it is not an error.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace tenet::train
