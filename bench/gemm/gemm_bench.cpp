// Single-precision GEMM throughput of a BLAS library on the shapes CapsNet
// needs (see docs/performance.md). One library per process: the library is
// dlopen()ed by path, so OpenBLAS, BLIS and oneDNN are measured by the same
// code without their symbols clashing.
//
//   gemm_bench LIBRARY_PATH API MODE
//     API   cblas (cblas_sgemm, row-major) or dnnl (dnnl_sgemm, row-major)
//     MODE  lib    one call; the library threads it (OMP_NUM_THREADS,
//                  OPENBLAS_NUM_THREADS, BLIS_NUM_THREADS set by run.sh)
//           split  an OpenMP parallel loop of two calls, each on half the
//                  rows (the library should run single-threaded inside it)
//
// Prints one line per shape: name, M, N, K, transposes, best and median
// seconds over the repetitions after one warm-up call, GFLOP/s of the best.
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

struct Shape {
  const char* name;
  int64_t m, n, k;
  bool trans_a, trans_b;
};

// B = 100 throughout; "per image" shapes are what a loop of GEMMs over the
// batch would call instead of one large GEMM.
const Shape kShapes[] = {
    {"primarycaps_fwd", 3600, 256, 20736, false, true},           // im2col(x) . w^T
    {"primarycaps_fwd_per_image", 256, 36, 20736, false, false},  // w . im2col(x_b)
    {"primarycaps_dw", 256, 20736, 3600, true, false},            // dy^T . im2col(x)
    {"primarycaps_dx_cols", 3600, 20736, 256, false, false},      // dy . w, then col2im
    {"conv1_fwd", 40000, 256, 81, false, true},
    {"conv1_fwd_per_image", 256, 400, 81, false, false},
    {"conv1_dw", 256, 81, 40000, true, false},
    {"decoder1", 100, 512, 160, false, true},
    {"decoder2", 100, 1024, 512, false, true},
    {"decoder3", 100, 784, 1024, false, true},
    {"decoder3_dw", 784, 1024, 100, true, false},
    {"capsule_transform", 160, 100, 8, false, false},  // one of 1152 per step
    {"square_1024", 1024, 1024, 1024, false, false},
    {"square_2048", 2048, 2048, 2048, false, false},
};

enum { kRowMajor = 101, kNoTrans = 111, kTrans = 112 };
using CblasSgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*,
                            int, float, float*, int);
using DnnlSgemm = int (*)(char, char, int64_t, int64_t, int64_t, float, const float*, int64_t,
                          const float*, int64_t, float, float*, int64_t);

CblasSgemm cblas = nullptr;
DnnlSgemm dnnl = nullptr;

void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
           const float* b, int64_t ldb, float* c, int64_t ldc) {
  if (cblas) {
    cblas(kRowMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, int(m), int(n), int(k), 1.0f,
          a, int(lda), b, int(ldb), 0.0f, c, int(ldc));
  } else {
    dnnl(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
  }
}

/// CPU seconds of the whole process (every thread): unlike wall time, not
/// inflated when other processes take turns on the same cores.
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s LIBRARY_PATH cblas|dnnl lib|split\n", argv[0]);
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 1;
  }
  const bool use_dnnl = std::strcmp(argv[2], "dnnl") == 0;
  if (use_dnnl)
    dnnl = reinterpret_cast<DnnlSgemm>(dlsym(lib, "dnnl_sgemm"));
  else
    cblas = reinterpret_cast<CblasSgemm>(dlsym(lib, "cblas_sgemm"));
  if (!cblas && !dnnl) {
    std::fprintf(stderr, "no sgemm entry point in %s\n", argv[1]);
    return 1;
  }
  const bool split = std::strcmp(argv[3], "split") == 0;
  const double budget =
      std::getenv("GEMM_BENCH_SECONDS") ? std::atof(std::getenv("GEMM_BENCH_SECONDS")) : 1.0;

  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const Shape& s : kShapes) {
    // Stored sizes: A is M x K (K x M when transposed), B is K x N (N x K).
    std::vector<float> a(size_t(s.m * s.k)), b(size_t(s.k * s.n)), c(size_t(s.m * s.n));
    for (float& x : a) x = dist(rng);
    for (float& x : b) x = dist(rng);
    const int64_t lda = s.trans_a ? s.m : s.k, ldb = s.trans_b ? s.k : s.n, ldc = s.n;
    auto run = [&] {
      if (!split) {
        sgemm(s.trans_a, s.trans_b, s.m, s.n, s.k, a.data(), lda, b.data(), ldb, c.data(), ldc);
        return;
      }
      // Two halves of the rows of C, one per thread.
#pragma omp parallel for num_threads(2) schedule(static)
      for (int half = 0; half < 2; ++half) {
        const int64_t lo = s.m * half / 2, hi = s.m * (half + 1) / 2;
        const float* a_rows = s.trans_a ? a.data() + lo : a.data() + lo * lda;
        sgemm(s.trans_a, s.trans_b, hi - lo, s.n, s.k, a_rows, lda, b.data(), ldb,
              c.data() + lo * ldc, ldc);
      }
    };
    run();  // warm-up: thread pools, page faults, the library's buffers
    std::vector<double> times, cpu_times;
    const auto start = std::chrono::steady_clock::now();
    while (times.size() < 3 || (seconds_since(start) < budget && times.size() < 200)) {
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = process_cpu_seconds();
      run();
      cpu_times.push_back(process_cpu_seconds() - c0);
      times.push_back(seconds_since(t0));
    }
    std::sort(times.begin(), times.end());
    std::sort(cpu_times.begin(), cpu_times.end());
    const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
    // GFLOP/s of the best wall time, and GFLOP per CPU-second (per core busy).
    std::printf(
        "%-26s %6lld %6lld %6lld %c%c best %9.5f s median %9.5f s %7.1f GFLOP/s %7.1f "
        "GFLOP/cpu-s\n",
        s.name, (long long)s.m, (long long)s.n, (long long)s.k, s.trans_a ? 'T' : 'N',
        s.trans_b ? 'T' : 'N', times.front(), times[times.size() / 2], flops / times.front() * 1e-9,
        flops / cpu_times.front() * 1e-9);
    std::fflush(stdout);
  }
  return 0;
}
