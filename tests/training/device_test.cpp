// `--device` of train, eval and predict (docs/cuda.md): the same run on the
// CPU and on the CUDA target's kernels emulated on the CPU gives the same
// parameters within float32 rounding (the steps' GEMMs and convolutions are
// summed in other orders), and a checkpoint written by either device
// evaluates and resumes on the other (host-side safetensors either way).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "tests/training/training_util.h"
#include "train/safetensors.h"

namespace tenet::testing {
namespace {

const char* kCnnRun =
    "train models/mnist_cnn.tn --epochs 1 --batch 20 --limit-train 100 --limit-test 60 ";

/// max |a - b| / max |b| over every parameter.
double parameter_difference(const std::string& a, const std::string& b) {
  const train::NamedTensors pa = checkpoint_parameters(a), pb = checkpoint_parameters(b);
  EXPECT_EQ(pa.size(), pb.size());
  double diff = 0, peak = 0;
  for (size_t k = 0; k < std::min(pa.size(), pb.size()); ++k) {
    const Tensor &x = pa[k].tensor, &y = pb[k].tensor;
    EXPECT_EQ(pa[k].name, pb[k].name);
    EXPECT_EQ(x.numel(), y.numel()) << pa[k].name;
    for (int64_t e = 0; e < std::min(x.numel(), y.numel()); ++e) {
      diff = std::max(diff, std::fabs(x.get(e) - y.get(e)));
      peak = std::max(peak, std::fabs(y.get(e)));
    }
  }
  return peak > 0 ? diff / peak : diff;
}

TEST_F(Training, EmulatedGpuTrainsLikeTheCpuAndSharesCheckpoints) {
  CommandResult cpu = tenet(std::string(kCnnRun) + "--out " + path("cpu"));
  ASSERT_EQ(cpu.exit_code, 0) << cpu.out << cpu.err;
  CommandResult emulated =
      tenet(std::string(kCnnRun) + "--device cuda-emulated --out " + path("emulated"));
  ASSERT_EQ(emulated.exit_code, 0) << emulated.out << emulated.err;
  // Five Adam steps from the same initialisation and batches: the logged
  // losses agree to float32 rounding; the parameters less closely, since
  // Adam's normalised step turns a rounding-level difference in a gradient
  // near 0 into a difference of up to the learning rate (measured: 1.3e-4
  // of the largest parameter; a wrong index in a kernel gives order 1).
  const std::vector<LogRow> cpu_log = read_log(path("cpu/log.csv")),
                            emulated_log = read_log(path("emulated/log.csv"));
  ASSERT_EQ(cpu_log.size(), emulated_log.size());
  for (size_t k = 0; k < cpu_log.size(); ++k)
    EXPECT_NEAR(emulated_log[k].loss, cpu_log[k].loss, 1e-5 * std::fabs(cpu_log[k].loss)) << k;
  EXPECT_LT(parameter_difference(path("emulated/last.safetensors"), path("cpu/last.safetensors")),
            1e-3);

  // The CPU's checkpoint on the emulated device, and back: the same evaluation.
  CommandResult a = tenet("eval models/mnist_cnn.tn --limit 60 --batch 20 --checkpoint " +
                          path("cpu") + " --device cuda-emulated");
  CommandResult b =
      tenet("eval models/mnist_cnn.tn --limit 60 --batch 20 --checkpoint " + path("cpu"));
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_EQ(a.out.substr(0, a.out.find("loss")), b.out.substr(0, b.out.find("loss")));

  // The CPU's run continued for a second epoch on either device: the same parameters.
  for (const char* copy : {"cpu2", "emulated2"})
    std::filesystem::copy(path("cpu"), path(copy), std::filesystem::copy_options::recursive);
  const std::string more = "train models/mnist_cnn.tn --epochs 2 --resume ";
  CommandResult on_cpu = tenet(more + path("cpu2"));
  CommandResult on_emulated = tenet(more + path("emulated2") + " --device cuda-emulated");
  ASSERT_EQ(on_cpu.exit_code, 0) << on_cpu.out << on_cpu.err;
  ASSERT_EQ(on_emulated.exit_code, 0) << on_emulated.out << on_emulated.err;
  EXPECT_NE(on_emulated.out.find("epoch 2/2: train loss"), std::string::npos) << on_emulated.out;
  EXPECT_LT(parameter_difference(path("emulated2/last.safetensors"), path("cpu2/last.safetensors")),
            1e-3);
}

// `tenet emit --train --target cuda-emulated`: the standalone project of the
// CUDA target's kernels, built as C++ for the grid emulator, takes the steps
// `tenet train --device cuda-emulated` takes (the same generated code, seed,
// batches and dropout masks), as the CPU's project does the CPU's
// (standalone_test.cpp). The cuda one builds with nvcc (cli_test.cpp).
TEST_F(Training, EmulatedGpuStandaloneProjectTrainsLikeTenetTrain) {
  const std::string project = path("project");
  CommandResult r = tenet("emit models/mnist_cnn.tn --train --target cuda-emulated -o " + project);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // the GEMM libraries tenet train's JIT links
  const std::string libraries = gemm_library_options();
  r = run_command("cmake -S " + project + " -B " + project + "/build" + libraries + " > " +
                  project + "/cmake.log 2>&1 && cmake --build " + project + "/build -j2 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string options = "--limit-train 100 --batch 20 --epochs 1 --seed 5";
  r = tenet("train models/mnist_cnn.tn --device cuda-emulated " + options + " --out " +
            path("run"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  r = run_command("cd " + source_path("") + " && OMP_NUM_THREADS=1 " + project +
                  "/build/train --data data/mnist-sample " + options + " --save " +
                  path("standalone.safetensors"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const train::NamedTensors expected = checkpoint_parameters(path("run/last.safetensors"));
  const train::SafetensorsFile saved = train::read_safetensors(path("standalone.safetensors"));
  ASSERT_EQ(saved.tensors.size(), expected.size());
  for (const train::NamedTensor& e : expected) {
    const Tensor* got = train::find_tensor(saved.tensors, e.name);
    ASSERT_NE(got, nullptr) << e.name;
    ASSERT_EQ(got->numel(), e.tensor.numel()) << e.name;
    double scale = 0, worst = 0;
    for (int64_t i = 0; i < e.tensor.numel(); ++i) {
      scale = std::max(scale, std::abs(e.tensor.get(i)));
      worst = std::max(worst, std::abs(e.tensor.get(i) - got->get(i)));
    }
    EXPECT_LE(worst, 1e-5 * scale) << e.name;
  }
}

TEST_F(Training, UnknownDeviceIsAUsageError) {
  CommandResult r = tenet(std::string(kCnnRun) + "--device tpu --out " + path("x"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: --device must be cpu, cuda or cuda-emulated, not 'tpu'\n");
}

}  // namespace
}  // namespace tenet::testing
