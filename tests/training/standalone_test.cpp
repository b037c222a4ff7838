// `tenet emit --train` (train/standalone_project.h): the emitted project for
// the MNIST CNN builds with CMake alone, its `train` program learns on the
// bundled sample, links no Python, libtorch or Tenet library, takes the same
// steps as `tenet train` (same seed and data: the same initial parameters,
// batch order and dropout masks), and `predict` classifies with what it saved.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "tests/training/training_util.h"
#include "train/safetensors.h"

namespace tenet::testing {
namespace {

/// The mean losses of the "step N  loss X" lines of `train`.
std::vector<double> losses(const std::string& out) {
  std::vector<double> values;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind("step ", 0) == 0)
      values.push_back(std::stod(line.substr(line.find("loss") + 4)));
  return values;
}

/// The line of `out` that starts with `prefix` ("" when none).
std::string line_starting(const std::string& out, const std::string& prefix) {
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

#ifdef TENET_MPIEXEC
/// The emitted `train` under mpirun: 2 ranks save the parameters of one
/// process taking the same 2 shards, byte for byte; rank 0 alone prints.
void check_train_under_mpirun(const std::string& source_dir, const std::string& train,
                              const std::string& dir) {
  const std::string options =
      " --data data/mnist-sample --limit-train 160 --batch 16 --epochs 1 --seed 5 --shards 2 ";
  const std::string env = "cd " + source_dir + " && OMP_NUM_THREADS=1 ";
  CommandResult r = run_command(env + train + options + "--save " + dir + "/one.st");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  r = run_command(env +
                  "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " TENET_MPIEXEC
                  " --oversubscribe -np 2 " +
                  train + options + "--save " + dir + "/two.st");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("test accuracy"), r.out.rfind("test accuracy")) << r.out;
  std::ifstream one(dir + "/one.st", std::ios::binary), two(dir + "/two.st", std::ios::binary);
  std::stringstream a, b;
  a << one.rdbuf();
  b << two.rdbuf();
  EXPECT_TRUE(a.str() == b.str() && !a.str().empty());
}
#endif

// One test builds the project once (about a minute on two cores) and checks
// everything that needs the build.
// The model is models/mnist_cnn.tn saved as time.tn: its generated header
// must not hide the system's <time.h> (the project's folder is on the include
// path), or the project would not build.
TEST_F(Training, StandaloneProjectTrainsLikeTenetTrain) {
  const std::string project = path("mnist_cnn");
  std::filesystem::copy_file(source_path("models/mnist_cnn.tn"), path("time.tn"));
  CommandResult r = tenet("emit " + path("time.tn") + " --train -o " + project);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "wrote " + project + " (time_train.h, train, predict)\n");
  const std::string libraries = gemm_library_options();
  r = run_command("cmake -S " + project + " -B " + project + "/build" + libraries + " > " +
                  project + "/cmake.log 2>&1 && cmake --build " + project + "/build -j2 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string train = "cd " + source_path("") + " && OMP_NUM_THREADS=1 " + project +
                            "/build/train --data data/mnist-sample ";

  // Nothing of Python, libtorch or Tenet is linked.
  r = run_command("ldd " + project + "/build/train");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* library : {"python", "torch", "libtenet"})
    EXPECT_EQ(lower(r.out).find(library), std::string::npos) << r.out;

  // It learns: measured (seed 1), the mean loss of steps 1-50 is 1.28, of
  // steps 151-200 0.31; test accuracy 95%.
  r = run_command(train + "--steps 200 --batch 16 --log-every 50 --limit-test 500");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::vector<double> curve = losses(r.out);
  ASSERT_EQ(curve.size(), 4u) << r.out;
  EXPECT_LT(curve.back(), 0.6 * curve.front()) << r.out;
  EXPECT_NE(line_starting(r.out, "trained 200 steps in "), "") << r.out;

  // The same 10 steps as `tenet train` (Adam, dropout on): the same
  // parameters, up to float rounding (bit-identical when both compilers
  // build the generated code alike).
  const std::string options = "--limit-train 160 --batch 16 --epochs 1 --seed 5";
  r = tenet("train models/mnist_cnn.tn " + options + " --out " + path("run"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  r = run_command(train + options + " --save " + path("standalone.safetensors"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string accuracy = line_starting(r.out, "test accuracy ");
  const train::NamedTensors expected = checkpoint_parameters(path("run/last.safetensors"));
  const train::SafetensorsFile saved = train::read_safetensors(path("standalone.safetensors"));
  ASSERT_EQ(saved.tensors.size(), expected.size());
  for (const train::NamedTensor& e : expected) {
    SCOPED_TRACE(e.name);
    const Tensor* got = train::find_tensor(saved.tensors, e.name);
    ASSERT_NE(got, nullptr);
    ASSERT_EQ(got->shape(), e.tensor.shape());
    double scale = 0, worst = 0;
    for (int64_t i = 0; i < e.tensor.numel(); ++i) {
      scale = std::max(scale, std::abs(e.tensor.get(i)));
      worst = std::max(worst, std::abs(e.tensor.get(i) - got->get(i)));
    }
    EXPECT_LE(worst, 1e-5 * scale);
  }

#ifdef TENET_MPIEXEC
  check_train_under_mpirun(source_path(""), project + "/build/train", path(""));
#endif

  // predict with the saved parameters: train's accuracy on the same images.
  const std::string predict = "cd " + source_path("") + " && OMP_NUM_THREADS=1 " + project +
                              "/build/predict --weights " + path("standalone.safetensors") +
                              " --images data/mnist-sample/t10k-images-idx3-ubyte.gz ";
  r = run_command(predict + "--labels data/mnist-sample/t10k-labels-idx1-ubyte.gz --print 2 " +
                  "--batch 64");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ("test " + line_starting(r.out, "accuracy "), accuracy) << r.out;
  EXPECT_NE(line_starting(r.out, "image 1: "), "") << r.out;
  // It also reads `tenet train`'s checkpoints.
  r = run_command(predict + "--print 1 --weights " + path("run/last.safetensors"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

  // Errors are messages, not crashes.
  r = run_command(predict + "--weights " + path("missing.safetensors"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "predict: error: " + path("missing.safetensors") +
                       ": cannot open: No such file or directory\n");
  // A save replaces only a regular file (it renamed over device nodes).
  r = run_command(train + "--steps 1 --save /dev/null");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/dev/null: will not write over a character device"), std::string::npos)
      << r.err;
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
  // The JSON parser it builds with travels with it, its MIT licence on top.
  std::ifstream json_hpp(project + "/nlohmann/json.hpp");
  std::stringstream shipped;
  shipped << json_hpp.rdbuf();
  EXPECT_NE(shipped.str().find("Permission is hereby granted"), std::string::npos);
  EXPECT_NE(shipped.str().find("INCLUDE_NLOHMANN_JSON_HPP_"), std::string::npos);
  r = run_command(train + "--optimizer adadelta --steps 1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "train: error: unknown optimizer 'adadelta' (sgd or adam)\n");
}

TEST_F(Training, EmitTrainNeedsTheTrainerDirectives) {
  CommandResult r = tenet("emit models/softmax.tn --train -o " + path("p"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("models/softmax.tn: error: no '# @train FN loss=OUTPUT' line"),
            std::string::npos)
      << r.err;
  r = tenet("emit models/mnist_cnn.tn --train --fn mnist_cnn -o " + path("p"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--fn and --train do not go together"), std::string::npos) << r.err;
}

// A file name is user text: a newline in it ended the comments that name the
// model's file ("// Generated by Tenet from ...", CMake's "# ...") and made
// the rest of the name code.
TEST_F(Training, EmitTrainEscapesTheFileNameInComments) {
  const std::string model = path("m\n#error injected\n.tn");
  std::filesystem::copy_file(source_path("models/mnist_cnn.tn"), model);
  CommandResult r = tenet("emit '" + model + "' --train -o " + path("p"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  int named = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(path("p"))) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      EXPECT_NE(line.rfind("#error injected", 0), 0u) << entry.path();
      named += line.find("m\\n#error injected\\n.tn") != std::string::npos;
    }
  }
  EXPECT_GE(named, 5);  // the generated code, the C API, the programs, CMake, README
}

}  // namespace
}  // namespace tenet::testing
