// NumPy .npy reading and writing: round trips of every supported dtype, files
// laid out exactly as numpy.save writes them, and each kind of bad file.

#include "support/npy.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "tests/interp/interp_test_util.h"
#include "tests/support/golden.h"

namespace tenet::ir::testing {
namespace {

/// A .npy file as numpy writes it: magic, version, little-endian header
/// length, the header padded with spaces to a 64-byte boundary and a newline.
std::string npy_bytes(int major, const std::string& header, const std::string& data) {
  size_t preamble = major == 1 ? 10 : 12;
  std::string text = header;
  size_t total = (preamble + text.size() + 1 + 63) / 64 * 64;
  text.append(total - preamble - text.size() - 1, ' ');
  text += '\n';
  std::string out = "\x93NUMPY";
  out += char(major);
  out += char(0);
  for (size_t i = 0; i < preamble - 8; ++i) out += char((text.size() >> (8 * i)) & 0xff);
  return out + text + data;
}

std::string bytes_of(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

std::string npy_error(const std::string& bytes) {
  return bind_error_of([&] { parse_npy(bytes, "x.npy"); });
}

class NpyFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("tenet-npy-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

TEST_F(NpyFiles, RoundTripsEveryDtype) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {5}, {2, 3}, {2, 0, 4}};
  for (ElemType type : {ElemType::F32, ElemType::F64, ElemType::I8, ElemType::U8, ElemType::I16,
                        ElemType::I32, ElemType::I64, ElemType::Bool, ElemType::U16, ElemType::U32,
                        ElemType::U64, ElemType::F16}) {
    for (const auto& shape : shapes) {
      Tensor t = type == ElemType::Bool ? random_tensor(ElemType::U8, shape, 3, 0, 1, 2).cast(type)
                                        : random_tensor(type, shape, 3, -100, 100, 100);
      std::string file = path("t.npy");
      write_npy(file, t);
      Tensor back = read_npy(file);
      EXPECT_EQ(back.describe(), t.describe());
      EXPECT_EQ(std::memcmp(back.raw(), t.raw(), t.nbytes()), 0) << t.describe();
    }
  }
}

TEST_F(NpyFiles, MissingOrUnwritableFiles) {
  EXPECT_EQ(bind_error_of([&] { read_npy(path("absent.npy")); }),
            "cannot read '" + path("absent.npy") + "': No such file or directory");
  EXPECT_EQ(bind_error_of([&] { write_npy(path("no/such/dir.npy"), Tensor(ElemType::F32, {1})); }),
            "cannot write '" + path("no/such/dir.npy") + "': No such file or directory");
}

TEST(Npy, WritesWhatNumpyWrites) {
  Tensor t = tensor_of(ElemType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(to_npy(t), npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                                 bytes_of({1, 2, 3, 4, 5, 6})));
  EXPECT_EQ(to_npy(tensor_of(ElemType::I64, {1}, {7})).substr(10, 60),
            "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }   ");  // padding follows
  EXPECT_EQ(to_npy(Tensor(ElemType::U8, {})).substr(10, 56),
            "{'descr': '|u1', 'fortran_order': False, 'shape': (), } ");
  EXPECT_EQ(to_npy(t).size() % 64, 24u);  // 64-byte aligned header, then 24 data bytes
}

// Files numpy wrote (np.save) for float16 and the unsigned types: exact values.
TEST(Npy, ReadsNumpysHalfAndUnsignedFiles) {
  auto read = [](const std::string& name) {
    return read_npy(tenet::testing::source_path("tests/fuzz/corpus-npy/" + name + ".npy"));
  };
  Tensor f2 = read("f2_3"), u2 = read("u2_3"), u4 = read("u4_2"), u8 = read("u8_2");
  EXPECT_EQ(f2.describe(), "float16[3]");
  EXPECT_EQ(values_of(f2), (std::vector<double>{1.0, -0.5, 65504}));
  EXPECT_EQ(u2.describe(), "uint16[3]");
  EXPECT_EQ(values_of(u2), (std::vector<double>{0, 1, 65535}));
  EXPECT_EQ(u4.describe(), "uint32[2]");
  EXPECT_EQ(values_of(u4), (std::vector<double>{7, 4294967295.0}));
  EXPECT_EQ(u8.describe(), "uint64[2]");
  EXPECT_EQ(u8.data<uint64_t>()[1], ~uint64_t(0));
  EXPECT_EQ(to_npy(f2).substr(10, 58),
            "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), } ");
}

TEST(Npy, ReadsVersions1And2) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  for (int major : {1, 2, 3}) {
    Tensor t = parse_npy(npy_bytes(major, header, bytes_of({1.5, -2, 3})), "x.npy");
    EXPECT_EQ(t.describe(), "float32[3]");
    EXPECT_EQ(values_of(t), (std::vector<double>{1.5, -2, 3}));
  }
  // Key order and spacing are free; '=' (native order) is little-endian here.
  Tensor t = parse_npy(
      npy_bytes(1, "{\"shape\":(2,1),\"fortran_order\":False,\"descr\":\"=f4\"}", bytes_of({4, 5})),
      "x.npy");
  EXPECT_EQ(t.describe(), "float32[2, 1]");
  EXPECT_EQ(values_of(t), (std::vector<double>{4, 5}));
}

TEST(Npy, RejectsBadFiles) {
  const std::string data = bytes_of({1, 2, 3, 4, 5, 6});
  auto header = [](const std::string& descr, const std::string& fortran, const std::string& shape) {
    return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
  };
  const std::string good = npy_bytes(1, header("<f4", "False", "(2, 3)"), data);
  EXPECT_EQ(npy_error("PK\x03\x04 a zip file"), "cannot read 'x.npy': not a .npy file (bad magic)");
  EXPECT_EQ(npy_error(""), "cannot read 'x.npy': empty file");
  EXPECT_EQ(npy_error(good.substr(0, 4)), "cannot read 'x.npy': truncated header");
  EXPECT_EQ(npy_error(good.substr(0, 40)), "cannot read 'x.npy': truncated header");
  EXPECT_EQ(npy_error(good.substr(0, good.size() - 16)),
            "cannot read 'x.npy': truncated: float32[2, 3] needs 24 bytes of data, the file has 8");
  EXPECT_EQ(npy_error(good + "junk"),
            "cannot read 'x.npy': 4 unexpected bytes after the data of float32[2, 3]");
  EXPECT_EQ(npy_error(npy_bytes(1, header("<f4", "True", "(2, 3)"), data)),
            "cannot read 'x.npy': Fortran-order data is not supported; save "
            "np.ascontiguousarray(arr)");
  EXPECT_EQ(npy_error(npy_bytes(1, header("<c8", "False", "(2, 3)"), data)),
            "cannot read 'x.npy': unsupported dtype '<c8' (supported: <f2 <f4 <f8 <i2 <i4 <i8 <u2 "
            "<u4 <u8 |i1 |u1 |b1)");
  EXPECT_EQ(npy_error(npy_bytes(1, header("|O", "False", "(2, 3)"), data)),
            "cannot read 'x.npy': unsupported dtype '|O' (supported: <f2 <f4 <f8 <i2 <i4 <i8 <u2 "
            "<u4 <u8 |i1 |u1 |b1)");
  EXPECT_EQ(
      npy_error(npy_bytes(1, header(">f4", "False", "(2, 3)"), data)),
      "cannot read 'x.npy': big-endian data ('>f4') is not supported; save arr.astype('<f4')");
  EXPECT_EQ(npy_error(npy_bytes(1, "{'descr': '<f4', 'shape': (2, 3), }", data)),
            "cannot read 'x.npy': malformed .npy header (no 'fortran_order')");
  EXPECT_EQ(npy_error(npy_bytes(1, header("<f4", "False", "(2, -3)"), data)),
            "cannot read 'x.npy': malformed .npy header (expected a dimension)");
  EXPECT_EQ(npy_error(npy_bytes(1, header("<f4", "False", "(99999999999, 99999999999)"), data)),
            "cannot read 'x.npy': the float32 data of shape (99999999999, 99999999999): its "
            "element count overflows a 64-bit integer");
  // No elements, but a stride no 64-bit integer holds: not a silent empty tensor.
  EXPECT_EQ(npy_error(npy_bytes(1, header("<f4", "False", "(0, 4611686018427387904)"), "")),
            "cannot read 'x.npy': the float32 data of shape (0, 4611686018427387904): "
            "4611686018427387904 elements of 4 bytes overflow a 64-bit byte size (counting each "
            "zero dimension as 1, as strides do)");
  std::string v4 = good;
  v4[6] = 4;
  EXPECT_EQ(npy_error(v4), "cannot read 'x.npy': unsupported .npy version 4.0");
}

}  // namespace
}  // namespace tenet::ir::testing
