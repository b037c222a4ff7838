// safetensors: the exact byte layout of the spec (hand-built files, both
// ways), round trips of every dtype, every validation error with its message,
// and the atomic write.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstring>
#include <filesystem>

#include "tests/train/train_test_util.h"
#include "train/safetensors.h"

namespace tenet::train {
namespace {

using testing::expect_error;
using testing::TempDir;

// An 8-byte little-endian length, written out byte by byte.
std::string le64(uint64_t v) {
  std::string s;
  for (int i = 0; i < 8; ++i) s += char((v >> (8 * i)) & 0xff);
  return s;
}

// A file from header text and data bytes (no padding added).
std::string file_of(const std::string& header, const std::string& data) {
  return le64(header.size()) + header + data;
}

Tensor f32(std::vector<int64_t> shape, std::vector<float> values) {
  Tensor t(ElemType::F32, std::move(shape));
  std::memcpy(t.raw(), values.data(), values.size() * sizeof(float));
  return t;
}

TEST(Safetensors, WritesTheSpecsByteLayout) {
  Tensor a = f32({2}, {1.0f, -2.0f});
  Tensor b(ElemType::I64, {});
  b.data<int64_t>()[0] = 7;
  const std::string header =
      R"({"__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"I64","shape":[],"data_offsets":[8,16]}})";
  ASSERT_EQ(header.size(), 132u);  // 8 + 132 = 140: 4 spaces pad the data start to 144
  const std::string expected = le64(136) + header + "    " +
                               std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8) +  // 1.0f, -2.0f
                               std::string("\x07\x00\x00\x00\x00\x00\x00\x00", 8);   // int64 7
  EXPECT_EQ(to_safetensors({{"a", a}, {"b", b}}, {{"k", "v"}}), expected);
  EXPECT_EQ(to_safetensors({}), le64(8) + "{}      ");
}

TEST(Safetensors, ReadsAHandBuiltFileInDataOrder) {
  // As other writers produce it: spaces, members in any order, padding.
  const std::string header =
      R"({"b": {"dtype": "U8", "shape": [3], "data_offsets": [4, 7]}, )"
      R"("__metadata__": {"format": "pt", "note": "caf\u00e9 \ud83d\ude00 \"q\""}, )"
      R"("a": {"dtype": "I32", "shape": [1, 1], "data_offsets": [0, 4]}}    )";
  const std::string data = std::string("\xfe\xff\xff\xff", 4) + "\x01\x02\x03";
  const SafetensorsFile f = parse_safetensors(file_of(header, data), "hand.safetensors");
  ASSERT_EQ(f.tensors.size(), 2u);
  EXPECT_EQ(f.tensors[0].name, "a");
  EXPECT_EQ(f.tensors[0].tensor.type(), ElemType::I32);
  EXPECT_EQ(f.tensors[0].tensor.shape(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(f.tensors[0].tensor.data<int32_t>()[0], -2);
  EXPECT_EQ(f.tensors[1].name, "b");
  EXPECT_EQ(f.tensors[1].tensor.data<uint8_t>()[2], 3);
  EXPECT_EQ(f.metadata.at("format"), "pt");
  EXPECT_EQ(f.metadata.at("note"), "caf\xc3\xa9 \xf0\x9f\x98\x80 \"q\"");
}

TEST(Safetensors, RoundTripsEveryDtypeAndShape) {
  NamedTensors tensors;
  const ElemType types[] = {ElemType::Bool, ElemType::U8,  ElemType::I8,  ElemType::I16,
                            ElemType::I32,  ElemType::I64, ElemType::F32, ElemType::F64};
  uint64_t seed = 1;
  for (ElemType t : types) {
    Tensor x = random_tensor(t, {3, 5}, seed++, -3, 3, 2);
    tensors.push_back({std::string(type_name(t)), x});
  }
  tensors.push_back({"scalar", f32({}, {3.5f})});
  tensors.push_back({"empty", Tensor(ElemType::F32, {0, 4})});
  tensors.push_back({"name with \"quotes\", \\ and \n", f32({1}, {1})});
  const Metadata metadata = {{"hash", "abc"}, {"multi\nline", "\t\x01"}};
  TempDir tmp;
  const std::string path = tmp.path("all.safetensors");
  write_safetensors(path, tensors, metadata);
  const SafetensorsFile back = read_safetensors(path);
  EXPECT_EQ(back.metadata, metadata);
  ASSERT_EQ(back.tensors.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    SCOPED_TRACE(tensors[i].name);
    const Tensor& a = tensors[i].tensor;
    const Tensor& b = back.tensors[i].tensor;
    EXPECT_EQ(back.tensors[i].name, tensors[i].name);
    EXPECT_EQ(a.type(), b.type());
    EXPECT_EQ(a.shape(), b.shape());
    EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0);
  }
  // Data is 8-byte aligned after the header.
  const std::string bytes = testing::read_bytes(path);
  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  EXPECT_EQ((8 + header_len) % 8, 0u);
}

struct BadFile {
  std::string bytes;
  std::string message;
};

std::string tensor_json(const std::string& name, const std::string& dtype, const std::string& shape,
                        const std::string& offsets) {
  return "\"" + name + "\":{\"dtype\":" + dtype + ",\"shape\":" + shape +
         ",\"data_offsets\":" + offsets + "}";
}

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(Safetensors, EveryValidationErrorNamesTheFileAndTheProblem) {
  const std::string f4(4, '\0'), f8(8, '\0');
  const std::string a = tensor_json("a", "\"F32\"", "[1]", "[0,4]");
  const std::string deep = std::string(70, '[') + std::string(70, ']');
  const BadFile cases[] = {
      {"12345", "the file is 5 bytes, shorter than the 8-byte header length"},
      {le64(1000) + "{}" + std::string(10, ' '),
       "the header length 1000 exceeds the 12 bytes after the length field"},
      {file_of("[]", ""), "the header does not start with '{'"},
      {file_of("", ""), "the header does not start with '{'"},
      {file_of("{\"a\":", ""), "invalid JSON in the header at byte 13: expected a value"},
      {file_of("{} x", ""), "invalid JSON in the header at byte 11: unexpected text after"},
      {file_of("{\"a\":\"\xff\"}", ""), "invalid UTF-8"},
      {file_of("{\"a\":" + deep + "}", ""), "nested deeper than 64 levels"},
      {file_of("{" + a + "," + a + "}", f4), "'a' appears twice in the header"},
      {file_of("{\"a\":[1]}", ""), "tensor 'a' must be described by an object, not an array"},
      {file_of("{" + tensor_json("a", "\"F16\"", "[2]", "[0,4]") + "}", f4),
       "tensor 'a': dtype F16 is not supported (supported: BOOL U8 I8 I16 I32 I64 F32 F64)"},
      {file_of("{" + tensor_json("a", "\"X9\"", "[1]", "[0,4]") + "}", f4),
       "tensor 'a': unknown dtype 'X9'"},
      {file_of("{" + tensor_json("a", "3", "[1]", "[0,4]") + "}", f4),
       "tensor 'a': 'dtype' must be a string, not a number"},
      {file_of("{" + tensor_json("a", "\"F32\"", "[-1]", "[0,4]") + "}", f4),
       "'shape' must hold non-negative integers, found -1"},
      {file_of("{" + tensor_json("a", "\"F32\"", "[1.5]", "[0,4]") + "}", f4),
       "'shape' must hold non-negative integers, found 1.5"},
      {file_of("{" + tensor_json("a", "\"F32\"", "{}", "[0,4]") + "}", f4),
       "'shape' must be an array, not an object"},
      {file_of("{" + tensor_json("a", "\"F32\"", "[1]", "[0]") + "}", f4),
       "'data_offsets' must hold 2 integers"},
      {file_of("{" + tensor_json("a", "\"F32\"", "[1]", "[4,0]") + "}", f4),
       "data_offsets [4, 0] end before they begin"},
      {file_of("{" + tensor_json("a", "\"F32\"", "[2]", "[0,8]") + "}", f4),
       "tensor 'a': data_offsets end at 8, beyond the 4-byte data buffer"},
      {file_of("{" + tensor_json("a", "\"F32\"", "[2]", "[0,4]") + "}", f4),
       "tensor 'a': F32 of shape [2] needs 8 bytes, but data_offsets cover 4"},
      // Sizes beyond 64 bits, even with no elements (a zero dimension).
      {file_of("{" + tensor_json("a", "\"F32\"", "[0,4611686018427387904]", "[0,0]") + "}", ""),
       "tensor 'a' of shape (0, 4611686018427387904): 4611686018427387904 elements of 4 bytes "
       "overflow a 64-bit byte size (counting each zero dimension as 1, as strides do)"},
      {file_of("{" + tensor_json("a", "\"F32\"", "[4294967296,4294967296,0]", "[0,0]") + "}", ""),
       "tensor 'a' of shape (4294967296, 4294967296, 0): its element count overflows a 64-bit "
       "integer"},
      {file_of("{" + a + "," + tensor_json("b", "\"F32\"", "[1]", "[2,6]") + "}", f8),
       "tensor 'b' (bytes 2..6) overlaps tensor 'a' (bytes 0..4)"},
      {file_of("{" + a + "," + tensor_json("b", "\"F32\"", "[1]", "[8,12]") + "}", f8 + f4),
       "bytes 4..8 of the data buffer belong to no tensor (before tensor 'b')"},
      {file_of("{" + tensor_json("b", "\"F32\"", "[1]", "[2,6]") + "}", f8),
       "bytes 0..2 of the data buffer belong to no tensor (before tensor 'b')"},
      {file_of("{" + a + "}", f4 + "xy"),
       "2 bytes at the end of the data buffer belong to no tensor"},
      {file_of("{\"__metadata__\":{\"n\":1}}", ""), "metadata 'n' must be a string, not a number"},
      {file_of("{\"__metadata__\":[]}", ""), "'__metadata__' must be an object of strings"},
      {file_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"strides\":[1]}}",
               f4),
       "tensor 'a' has an unknown field 'strides'"},
      {file_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", f4), "tensor 'a' lacks 'data_offsets'"},
      {file_of("{" + tensor_json("a", "\"BOOL\"", "[2]", "[0,2]") + "}", "\x01\x02"),
       "tensor 'a': BOOL value other than 0 or 1"},
      // What a JSON library does by default and a safetensors reader must not:
      // keep one of two values for a key, nest without limit, read 2^64 as a
      // float (the message shows the number as written), accept trailing commas or lone surrogates.
      {file_of("{\"__metadata__\":{\"k\":\"a\",\"k\":\"b\"}}", ""), "metadata 'k' appears twice"},
      {file_of("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
               f4),
       "tensor 'a' has field 'dtype' twice"},
      {file_of("{\"__metadata__\":{\"k\":\"a\"},\"__metadata__\":{}}", ""),
       "'__metadata__' appears twice in the header"},
      {file_of("{\"a\":" + repeat("{\"b\":", 70) + "1" + std::string(70, '}') + "}", ""),
       "the header is nested deeper than 64 levels"},
      {file_of("{" + tensor_json("a", "\"F32\"", "[18446744073709551616]", "[0,4]") + "}", f4),
       "'shape' must hold non-negative integers, found 18446744073709551616"},
      {file_of("{" + tensor_json("a", "\"F32\"", "[1]", "[0,1e2]") + "}", f4),
       "'data_offsets' must hold non-negative integers, found 1e2"},
      {file_of("{" + tensor_json("a", "\"F32\"", "[true]", "[0,4]") + "}", f4),
       "'shape' must hold non-negative integers, found a boolean"},
      {file_of("{\"a\":1,}", ""),
       "invalid JSON in the header at byte 15: unexpected '}'; expected a member name in quotes"},
      {file_of("{\"a\" 1}", ""),
       "invalid JSON in the header at byte 13: unexpected '1'; expected ':'"},
      {file_of("{\"a\":\"\\ud800\"}", ""),
       "invalid JSON in the header at byte 20: invalid string: surrogate U+D800..U+DBFF must be "
       "followed by U+DC00..U+DFFF"},
      {file_of("{\"a\":\"x\ny\"}", ""),
       "invalid JSON in the header at byte 15: invalid string: control character U+000A must be "
       "escaped"},
      {file_of("{\"a\":nul}", ""), "invalid JSON in the header at byte 16: invalid literal"},
      {file_of("{\"a\":1} // note", ""), "unexpected text after the JSON value"},
      // Found by fuzzing: the parser's own out-of-range exception escaped.
      {file_of("{\"w\":4444444444444444444445e44444}", ""),
       "invalid JSON in the header: a number is beyond the range of a 64-bit float"},
  };
  for (const BadFile& c : cases) {
    SCOPED_TRACE(c.message);
    expect_error([&] { parse_safetensors(c.bytes, "bad.safetensors"); },
                 {"bad.safetensors: invalid safetensors file: ", c.message});
  }
}

// Found by the second hostile-input round: a duplicate check that scanned
// every earlier key made a 13 MB header take minutes. 200,000 tensors now
// read in a fraction of a second (the quadratic reader would time out).
TEST(Safetensors, ManyTensorsReadInLinearTime) {
  std::string header = "{";
  const int n = 200000;
  for (int i = 0; i < n; ++i)
    header += (i ? "," : "") + tensor_json("t" + std::to_string(i), "\"F32\"", "[0]", "[0,0]");
  header += "}";
  const SafetensorsFile f = parse_safetensors(file_of(header, ""), "many.safetensors");
  ASSERT_EQ(f.tensors.size(), size_t(n));
  EXPECT_EQ(f.tensors[0].name, "t0");
}

TEST(Safetensors, HeadersAreCappedInTensors) {
  // One key more than the cap; the count is checked before any tensor is.
  std::string header = "{";
  for (size_t i = 0; i <= kMaxSafetensorsTensors; ++i)
    header += (i ? ",\"" : "\"") + std::to_string(i) + "\":0";
  header += "}";
  expect_error([&] { parse_safetensors(file_of(header, ""), "big.safetensors"); },
               {"big.safetensors: invalid safetensors file: the header describes 250001 tensors, "
                "more than the 250000 a file may hold"});
  // (More JSON values than train/json.h reads: tests/train/json_test.cpp.)
}

// Found by the second hostile-input round: run as root, a save renamed its
// file over a device node. Only regular files are replaced; the rest are
// refused, named, and left as they were.
TEST(Safetensors, WritesOverNothingButRegularFiles) {
  TempDir tmp;
  const NamedTensors tensors = {{"x", f32({1}, {1})}};
  testing::write_bytes(tmp.path("target"), "keep");
  std::filesystem::create_symlink(tmp.path("target"), tmp.path("link.safetensors"));
  ASSERT_EQ(::mkfifo(tmp.path("fifo.safetensors").c_str(), 0644), 0);
  const std::pair<std::string, std::string> cases[] = {
      {tmp.path("link.safetensors"), "a symbolic link"},
      {tmp.path("fifo.safetensors"), "a FIFO"},
      {"/dev/null", "a character device"},
  };
  for (const auto& c : cases) {
    const std::string& path = c.first;  // (a lambda may not capture a structured binding)
    const std::string& kind = c.second;
    SCOPED_TRACE(path);
    expect_error([&] { write_safetensors(path, tensors); },
                 {path + ": will not write over " + kind +
                  " (a save replaces only a regular file or makes a new one)"});
  }
  EXPECT_TRUE(std::filesystem::is_symlink(tmp.path("link.safetensors")));
  EXPECT_TRUE(std::filesystem::is_fifo(tmp.path("fifo.safetensors")));
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
  EXPECT_EQ(testing::read_bytes(tmp.path("target")), "keep");
  // A regular file is replaced, a new one made.
  write_safetensors(tmp.path("target"), tensors);
  write_safetensors(tmp.path("new.safetensors"), tensors);
  EXPECT_EQ(read_safetensors(tmp.path("target")).tensors.size(), 1u);
  EXPECT_EQ(read_safetensors(tmp.path("new.safetensors")).tensors.size(), 1u);
}

TEST(Safetensors, FileErrors) {
  TempDir tmp;
  // Not read without end (memory ran out), nor blocking on a FIFO.
  expect_error([&] { read_safetensors("/dev/zero"); },
               {"/dev/zero: cannot open: it is a character device, not a regular file"});
  ASSERT_EQ(::mkfifo(tmp.path("fifo.safetensors").c_str(), 0644), 0);
  expect_error([&] { read_safetensors(tmp.path("fifo.safetensors")); },
               {tmp.path("fifo.safetensors") + ": cannot open: it is a FIFO, not a regular file"});
  expect_error([&] { read_safetensors(tmp.path("missing.safetensors")); },
               {tmp.path("missing.safetensors") + ": cannot open"});
  testing::write_bytes(tmp.path("short.safetensors"), "abc");
  expect_error([&] { read_safetensors(tmp.path("short.safetensors")); },
               {tmp.path("short.safetensors") + ": invalid safetensors file: the file is 3 bytes"});
  expect_error([&] { write_safetensors(tmp.path("no/such/dir/x.safetensors"), {}); },
               {tmp.path("no/such/dir/x.safetensors") + ": cannot create a temporary file"});
  const Tensor t = f32({1}, {1});
  expect_error([&] { to_safetensors({{"a", t}, {"a", t}}); }, {"tensor name 'a' appears twice"});
  expect_error([&] { to_safetensors({{"", t}}); }, {"a tensor has an empty name"});
  expect_error([&] { to_safetensors({{"__metadata__", t}}); }, {"'__metadata__' is reserved"});
  // A header that is not UTF-8 would be refused by every reader: not written.
  expect_error(
      [&] {
        to_safetensors({{"a", t}}, {{"path", "caf\xe9"}});
      },
      {"safetensors: metadata 'path' is not valid UTF-8"});
  expect_error(
      [&] {
        to_safetensors({{"\xff", t}});
      },
      {"safetensors: a tensor name is not valid UTF-8"});
}

TEST(Safetensors, WritesAtomicallyAndLeavesNoTemporaries) {
  TempDir tmp;
  const std::string path = tmp.path("w.safetensors");
  write_safetensors(path, {{"x", f32({2}, {1, 2})}});
  write_safetensors(path, {{"y", f32({1}, {3})}});  // replaces the file
  const SafetensorsFile back = read_safetensors(path);
  ASSERT_EQ(back.tensors.size(), 1u);
  EXPECT_EQ(back.tensors[0].name, "y");
  // A directory is not written over (nor is a temporary file left).
  std::filesystem::create_directory(tmp.path("dir.safetensors"));
  expect_error([&] { write_safetensors(tmp.path("dir.safetensors"), {}); },
               {tmp.path("dir.safetensors") + ": will not write over a directory"});
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(tmp.dir()))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"dir.safetensors", "w.safetensors"}));
}

}  // namespace
}  // namespace tenet::train
