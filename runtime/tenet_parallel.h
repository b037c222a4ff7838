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

}  // namespace tenet
