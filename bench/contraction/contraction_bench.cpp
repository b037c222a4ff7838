// Before/after timing of contraction lowering (docs/performance.md): each
// case is compiled twice in the same run, once with the pipeline as it is
// ("gemm") and once without the contraction pass ("loops"), and run on the
// same random inputs; both are checked against each other.
//
//   tenet_bench_contraction [REPEATS]    (default 5; median of REPEATS runs after one warm-up)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "ad/grad.h"
#include "driver/driver.h"
#include "ir/bind.h"
#include "jit/jit.h"
#include "support/diagnostics.h"
#include "support/tensor.h"

#ifndef TENET_SOURCE_DIR
#define TENET_SOURCE_DIR "."
#endif

namespace {

using namespace tenet;

struct Case {
  const char* label;
  const char* file;
  const char* fn;
  bool gradient;  // the vector-Jacobian product program of fn instead of fn
  ir::SizeBindings sizes;
};

/// CPU seconds of the whole process: with OMP_NUM_THREADS=1 the time the
/// work takes, whatever else runs on the machine.
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

struct Timing {
  double wall = 0, cpu = 0;  // medians
};

Timing measure(const jit::CompiledFunction& f, const std::vector<Tensor>& inputs,
               const ir::SizeBindings& sizes, int repeats, std::vector<Tensor>* outputs) {
  *outputs = f.run(inputs, sizes);  // warm-up: page faults, thread pools
  std::vector<double> wall, cpu;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = process_cpu_seconds();
    *outputs = f.run(inputs, sizes);
    cpu.push_back(process_cpu_seconds() - c0);
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  // OpenBLAS picks kernels for this CPU (AVX-512) unless the environment
  // forces others; some set OPENBLAS_CORETYPE=Haswell (AVX2, 40% slower here).
  ::unsetenv("OPENBLAS_CORETYPE");
  const std::vector<Case> cases = {
      {"CapsNet forward, batch 2", "models/capsnet.tn", "capsnet", false, {{"B", 2}}},
      {"PrimaryCaps conv (9x9 stride 2, 256->256, 20x20), batch 8",
       "models/conv2d.tn",
       "conv2d_stride2",
       false,
       {{"B", 8}, {"C", 256}, {"H", 20}, {"W", 20}, {"O", 256}}},
      {"conv1 (9x9, 1->256, 28x28), batch 8",
       "models/conv2d.tn",
       "conv2d",
       false,
       {{"B", 8}, {"C", 1}, {"H", 28}, {"W", 28}, {"O", 256}, {"KH", 9}, {"KW", 9}}},
      {"PrimaryCaps conv forward+backward, batch 8",
       "models/conv2d.tn",
       "conv2d_stride2",
       true,
       {{"B", 8}, {"C", 256}, {"H", 20}, {"W", 20}, {"O", 256}}},
  };
  std::printf("GEMM backend: %s\n", jit::blas_library().c_str());
  const char* threads = std::getenv("OMP_NUM_THREADS");
  std::printf("OMP_NUM_THREADS=%s; medians of %d runs after a warm-up\n",
              threads ? threads : "(unset)", repeats);
  std::printf(
      "| case | loops: wall / CPU (s) | gemm: wall / CPU (s) | speedup (wall, CPU) | "
      "max rel. difference |\n");
  std::printf("|---|---|---|---|---|\n");
  for (const Case& c : cases) {
    driver::Request request;
    request.path = std::string(TENET_SOURCE_DIR) + "/" + c.file;
    request.functions = {{c.fn, std::nullopt}};
    if (c.gradient) {
      ad::GradRequest vjp;
      vjp.vjp = true;
      request.functions[0].grad = vjp;
    }
    const driver::Compilation gemm = driver::compile(request);
    const ir::Module& m = gemm.optimised;
    const std::string name = m.functions.at(0).name;
    jit::CompiledFunction with_gemm = driver::load(request, gemm).at(0);
    request.skip_passes = {"contraction"};  // every contraction in loops
    jit::CompiledFunction with_loops = driver::load(request, driver::compile(request)).at(0);
    const std::vector<Tensor> inputs = ir::random_inputs(*m.find(name), c.sizes, 1);
    std::vector<Tensor> out_gemm, out_loops;
    const Timing t_loops = measure(with_loops, inputs, c.sizes, repeats, &out_loops);
    const Timing t_gemm = measure(with_gemm, inputs, c.sizes, repeats, &out_gemm);
    double worst = 0;
    for (size_t i = 0; i < out_gemm.size(); ++i) {
      double scale = 0, diff = 0;
      for (int64_t k = 0; k < out_loops[i].numel(); ++k) {
        scale = std::max(scale, std::fabs(out_loops[i].get(k)));
        diff = std::max(diff, std::fabs(out_gemm[i].get(k) - out_loops[i].get(k)));
      }
      worst = std::max(worst, diff / std::max(scale, 1e-30));
    }
    std::printf("| %s | %.4f / %.4f | %.4f / %.4f | %.1fx, %.1fx | %.1e |\n", c.label, t_loops.wall,
                t_loops.cpu, t_gemm.wall, t_gemm.cpu, t_loops.wall / t_gemm.wall,
                t_loops.cpu / t_gemm.cpu, worst);
    std::fflush(stdout);
  }
  return 0;
}
