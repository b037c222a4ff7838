// `tenet` on sizes and shapes whose element counts or byte sizes overflow
// 64 bits (issue 13, item 2): each is a user error (exit 1) naming the
// tensor and its sizes, on both backends, never a crash or a silent result.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/cli_util.h"

using tenet::testing::Cli;
using tenet::testing::CommandResult;

namespace {

const char* kCube = R"(def cube(float x) -> (y) {
  y(i, j, k) = x where i in 0:1073741824, j in 0:1073741824, k in 0:4
}
)";

const char* kMatmul = R"(def mm(float(M, K) a, float(K, N) b) -> (c) {
  c(i, j) +=! a(i, k) * b(k, j)
}
)";

const char* kStrided = R"(def f(float(N) x) -> (y) {
  y +=! x(2 * k) where k in 0:K
}
)";

const char* kShift = R"(def f(float(N) x) -> (y) {
  y(i) = x(i + 2) where i in 0:N - 2
}
)";

void expect_user_error(const CommandResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "error: " + message + "\n");
  EXPECT_EQ(r.out.find("checksum"), std::string::npos) << r.out;
}

}  // namespace

TEST_F(Cli, TensorWhoseBytesOverflow) {
  write("cube.tn", kCube);
  for (const char* backend : {"interp", "cpp"})
    expect_user_error(run_in_dir(std::string("run cube.tn --backend ") + backend),
                      "tensor 'y' of shape (1073741824, 1073741824, 4): 4611686018427387904 "
                      "elements of 4 bytes overflow a 64-bit byte size");
}

TEST_F(Cli, SizeWhoseTensorsOverflow) {
  write("mm.tn", kMatmul);
  expect_user_error(run_in_dir("run mm.tn --sizes M=4611686018427387904,K=2,N=2"),
                    "tensor 'a' of shape (4611686018427387904, 2): its element count overflows a "
                    "64-bit integer");
  // No elements, but strides no 64-bit integer holds.
  expect_user_error(run_in_dir("run mm.tn --sizes M=4611686018427387904,K=0,N=2 --backend cpp"),
                    "tensor 'a' of shape (4611686018427387904, 0): 4611686018427387904 elements "
                    "of 4 bytes overflow a 64-bit byte size (counting each zero dimension as 1, "
                    "as strides do)");
  // Representable, but more than any machine has.
  CommandResult r = run_in_dir("run mm.tn --sizes M=46116860184273879,K=2,N=2");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("error: cannot allocate 368934881474191032 bytes for tensor 'a' of shape "
                        "(46116860184273879, 2) (this machine has ",
                        0),
            0u)
      << r.err;
}

TEST_F(Cli, NpyShapeWithZeroAndImpossibleDimensions) {
  // 128 bytes: a version 1.0 header of shape (0, 4611686018427387904), no data.
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4611686018427387904), }";
  header += std::string(128 - 10 - 1 - header.size(), ' ') + "\n";
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + char(header.size()) + '\0' + header;
  ASSERT_EQ(bytes.size(), 128u);
  write("mm.tn", kMatmul);
  std::filesystem::create_directories(dir_ / "in");
  write("in/a.npy", bytes);
  write("in/b.npy", bytes);
  expect_user_error(run_in_dir("run mm.tn --inputs in"),
                    "cannot read 'in/a.npy': the float32 data of shape (0, 4611686018427387904): "
                    "4611686018427387904 elements of 4 bytes overflow a 64-bit byte size "
                    "(counting each zero dimension as 1, as strides do)");
}

TEST_F(Cli, ReadWhoseIndexOverflows) {
  // 2*k for k up to 2^62 wraps to -2^63: the bounds check must not wrap.
  write("strided.tn", kStrided);
  for (const char* backend : {"interp", "cpp"})
    expect_user_error(
        run_in_dir(std::string("run strided.tn --sizes K=4611686018427387905,N=8 --backend ") +
                   backend),
        "index 2*k of the read x(2*k) in the statement defining 'y' overflows a 64-bit integer "
        "for k in 0:4611686018427387905");
  expect_user_error(run_in_dir("run strided.tn --sizes K=4611686018427387904,N=8 --backend cpp"),
                    "out-of-bounds read x(2*k) in the statement defining 'y': dimension 0 index "
                    "2*k reaches 9223372036854775806, outside [0, 8) (K = 4611686018427387904, "
                    "N = 8)");
}

TEST_F(Cli, GradientWhoseSizesMakeATensorNegative) {
  // The cotangent d_y of y(i) for i in 0:N - 2 is N - 2 long: negative for N = 1.
  write("shift.tn", kShift);
  expect_user_error(run_in_dir("run shift.tn --grad --vjp --sizes N=1"),
                    "dimension 0 of 'd_y' is N - 2 = -1 for N = 1");
}

TEST_F(Cli, ModelParameterWhoseBytesOverflow) {
  // models/mlp.tn with one more parameter, of 2^61 floats (2^63 bytes).
  std::string model = tenet::testing::read_file(tenet::testing::source_path("models/mlp.tn"));
  auto replace = [&](const std::string& from, const std::string& to) {
    const size_t at = model.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    model.replace(at, from.size(), to);
  };
  replace("float(256) fc1_b,", "float(256) fc1_b, float(1073741824, 1073741824, 2) big,");
  replace("# @param fc1_b", "# @param big zeros\n# @param fc1_b");
  replace("h2(b, k) + fc2_b(k)", "h2(b, k) + fc2_b(k) + big(0, 0, 0)");
  write("big.tn", model);
  expect_user_error(run_in_dir("train big.tn --epochs 1 --out runs"),
                    "parameter 'big' of shape (1073741824, 1073741824, 2): 2305843009213693952 "
                    "elements of 4 bytes overflow a 64-bit byte size");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "runs" / "last.safetensors"));
}

TEST_F(Cli, FunctionNameLongerThanTheGeneratedBanner) {
  // Found by fuzz_binder: the "// ---- f ----" banner's width, 70 - the name's
  // length, wrapped around as an unsigned size for names over 70 characters.
  const std::string name(80, 'f');
  write("long.tn", "def " + name + "(float(N) x) -> (y) {\n  y(i) = x(i)\n}\n");
  CommandResult r = run_in_dir("print long.tn --stage cpp");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("// ---- " + name + " ---\n"), std::string::npos) << r.out;
}
