/// \file
/// Where a compiled function spends its time, statement by statement: code
/// generated with CppOptions::profile (the JIT sets it where the environment
/// has TENET_PROFILE) defines TENET_PROFILE, includes this header and marks
/// each top-level statement of a function as a region of its table. A region
/// accumulates its wall time and calls, and the most pieces its parallel work
/// was cut into: a GEMM's tiles or a convolution's blocks where it calls the
/// library (the bulk of such a region), else its parallel loops' iterations
/// (note_pieces). When the library is unloaded (at the
/// latest when the process ends) each table writes one line per region that
/// ran:
///
///   profile<TAB>function<TAB>region<TAB>calls<TAB>seconds<TAB>pieces<TAB>label
///
/// to stderr, or appended to the file TENET_PROFILE names when it is not 1.
/// bench/step_profile.py turns two such runs (1 and N threads) into the table of
/// docs/performance.md, "The parallel decomposition". For diagnosis: regions
/// are timed on the calling thread, one call of a function at a time.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tenet::profile {

struct Region {
  const char* label = nullptr;
  int64_t calls = 0, loop_pieces = 0, library_pieces = 0;
  double seconds = 0;
  /// The library's pieces where the region calls one (its bulk: packing
  /// loops around a GEMM take a few percent), else its loops'.
  int64_t pieces() const { return library_pieces > 0 ? library_pieces : loop_pieces; }
};

class Table;

/// The table whose region the calling thread is in (note_pieces adds to it).
inline Table*& current_table() {
  thread_local Table* table = nullptr;
  return table;
}

/// One function's regions, a static of the generated function.
class Table {
 public:
  static constexpr int kMostRegions = 4096;

  explicit Table(const char* function) : function_(function) {}
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;
  ~Table() { write(); }

  void start(int region, const char* label) {
    if (region < 0 || region >= kMostRegions) return;
    open_ = region;
    regions_[region].label = label;
    used_ = std::max(used_, region + 1);
    current_table() = this;
    started_ = std::chrono::steady_clock::now();
  }

  void stop() {
    if (open_ < 0) return;
    Region& r = regions_[open_];
    r.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    r.calls += 1;
    open_ = -1;
    current_table() = nullptr;
  }

  void note_pieces(int64_t pieces, bool library) {
    if (open_ < 0) return;
    int64_t& most = library ? regions_[open_].library_pieces : regions_[open_].loop_pieces;
    most = std::max(most, pieces);
  }

 private:
  void write() const {
    const char* where = std::getenv("TENET_PROFILE");
    FILE* out = where && *where && std::strcmp(where, "1") != 0 ? std::fopen(where, "a") : nullptr;
    FILE* to = out ? out : stderr;
    for (int i = 0; i < used_; ++i) {
      const Region& r = regions_[i];
      if (r.calls == 0) continue;
      std::fprintf(to, "profile\t%s\t%d\t%lld\t%.9f\t%lld\t%s\n", function_, i,
                   static_cast<long long>(r.calls), r.seconds, static_cast<long long>(r.pieces()),
                   r.label ? r.label : "");
    }
    if (out) std::fclose(out);
  }

  const char* function_;
  Region regions_[kMostRegions];
  int used_ = 0, open_ = -1;
  std::chrono::steady_clock::time_point started_{};
};

/// The pieces of the parallel work the calling thread is about to share out,
/// for the region it is in (none outside a profiled function: nothing): a
/// generated loop's iterations, or a library call's tiles or blocks.
inline void note_pieces(int64_t pieces, bool library = false) {
  if (Table* table = current_table()) table->note_pieces(pieces, library);
}

}  // namespace tenet::profile
