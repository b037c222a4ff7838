/// \file
/// How finely the library calls of a step (tenet_gemm.h, tenet_conv.h) are
/// cut into pieces that OpenMP's threads share.
///
/// Bits must not depend on the thread count: a GEMM cut into slices of its
/// sum, or a convolution's weight gradient cut into blocks of the batch,
/// adds partial results, and the cut decides the order of those additions.
/// So the cut is fixed by the shape and by the machine, never by
/// OMP_NUM_THREADS or the load: on one machine (or on machines with the same
/// TENET_PARALLEL_CORES and instruction set, which the libraries' kernels
/// depend on too) a step computes the same bits with 1, 2 or 64 threads.
/// The machine decides how many pieces are worth having: two per core, so
/// that threads that finish early can take a piece of a thread the machine's
/// load delays, from 8 (what a 2-core machine gets; no fewer, so that small
/// machines behave alike) to 64.
///
/// Expects: a POSIX system (sysconf). Guarantees: parallel_pieces() is a power
/// of two from 8 to 64, read once per process.
#pragma once

#include <unistd.h>
#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace tenet {

/// The cores the decomposition is made for: TENET_PARALLEL_CORES where set
/// (1 to 4096: to reproduce another machine's bits, or to test its cuts),
/// else every core of the machine (_SC_NPROCESSORS_CONF: not the affinity
/// mask, which taskset or a container's CPU set change from run to run).
inline int64_t parallel_cores() {
  static const int64_t cores = [] {
    if (const char* text = std::getenv("TENET_PARALLEL_CORES")) {
      char* end = nullptr;
      const long given = std::strtol(text, &end, 10);
      if (end != text && *end == '\0' && given >= 1 && given <= 4096) return int64_t(given);
    }
    const long configured = sysconf(_SC_NPROCESSORS_CONF);
    return int64_t(configured >= 1 ? configured : 1);
  }();
  return cores;
}

/// The most pieces a library call is cut into: two per core, a power of two
/// from 8 to 64.
inline int64_t parallel_pieces() {
  int64_t pieces = 8;
  while (pieces < 64 && pieces < 2 * parallel_cores()) pieces *= 2;
  return pieces;
}

/// The least work of one piece, for a kind of call whose pieces are worth
/// `at_8_pieces` FLOP each on a machine that gets 8 pieces (up to 4 cores):
/// smaller as the machine gets more pieces (more threads kept busy outweigh
/// each call's few microseconds of start-up), down to a quarter of it at 32.
inline int64_t least_piece_flops(int64_t at_8_pieces, int64_t pieces = parallel_pieces()) {
  return std::max<int64_t>(at_8_pieces / 4, at_8_pieces * 8 / std::max<int64_t>(1, pieces));
}

/// The spin count a program of Tenet's gives OpenMP where the user set none.
constexpr const char* kOpenmpSpinCount = "3000";

/// Between parallel regions OpenMP's threads wait by spinning; libgomp spins
/// for 300,000 rounds (milliseconds) before it sleeps, and on a machine whose
/// cores another job shares, its spinning threads take the cores the others
/// need: two MNIST CNN training jobs of 2 threads on 2 cores took 65 ms a
/// step each instead of 33 (a transformer block 385 ms instead of 25,
/// ResNet-20 1440 ms instead of 250). With 3,000 rounds (GOMP_SPINCOUNT) they
/// took 34, 29 and 258 ms, and an idle machine 0-4% longer than with the
/// default (docs/performance.md, "A loaded machine"). libgomp reads its
/// settings once, when it is loaded, which for a program linked with it is
/// before main: so main calls this first; where neither GOMP_SPINCOUNT nor
/// OMP_WAIT_POLICY is set, it sets GOMP_SPINCOUNT and starts the program
/// again (execv of /proc/self/exe, the same arguments; once:
/// TENET_OPENMP_SETTLED marks the second start). Where that fails, or off
/// Linux, the program runs on with OpenMP's defaults.
inline void settle_openmp_waiting(char** argv) {
#ifdef __linux__
  if (std::getenv("GOMP_SPINCOUNT") || std::getenv("OMP_WAIT_POLICY") ||
      std::getenv("TENET_OPENMP_SETTLED"))
    return;
  if (setenv("GOMP_SPINCOUNT", kOpenmpSpinCount, 1) != 0 ||
      setenv("TENET_OPENMP_SETTLED", "1", 1) != 0)
    return;
  execv("/proc/self/exe", argv);
  unsetenv("GOMP_SPINCOUNT");  // execv failed: OpenMP keeps the defaults it read
#else
  (void)argv;
#endif
}

}  // namespace tenet
