/// \file
/// Counting the heap allocations and page faults of a piece of code, for the
/// tests of "allocates nothing" guarantees (jit::Executable's steps, the
/// optimisers, the MNIST batcher). Linked into the suites that use it only
/// (an object library, tests/CMakeLists.txt): it replaces the global operator
/// new (every form) and, where no sanitizer runtime owns malloc, the C
/// allocation functions (forwarding to glibc's).
///
/// While a Counter runs, allocations are counted in the calling thread or in
/// every thread, and each C allocation's caller is recorded so that it can be
/// attributed to a library: the OpenMP runtime and the BLAS library keep
/// small per-call bookkeeping on the heap (OpenBLAS's threaded GEMM driver
/// allocates its job table on every call, libgomp some of its parallel
/// regions' state, the dynamic loader now and then the libraries' thread-local
/// storage), which is theirs, not Tenet's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tenet::testing {

/// Whether malloc is glibc's, so that C allocations (malloc & co) are counted
/// and page faults mean what they mean in a release build: not under
/// AddressSanitizer, whose runtime owns malloc and quarantines freed memory.
bool glibc_allocator();

struct Allocations {
  /// operator new, any form, by caller: the runtime libraries (as below;
  /// oneDNN's primitive execution allocates its argument tables), and
  /// everything else.
  int64_t cxx = 0;
  int64_t cxx_runtime = 0;
  /// C allocations (counted only when glibc_allocator()) by caller: the
  /// runtime libraries (OpenMP runtimes, the dynamic loader, and those named
  /// to stop()), and everything else (the code under test, Tenet, the
  /// standard library).
  int64_t c_runtime = 0;
  int64_t c_other = 0;
  std::vector<std::string> other_callers;  // the libraries of the cxx and c_other ones
  int64_t minor_page_faults = 0;           // of the whole process (getrusage)
};

/// Whose allocations a Counter counts.
enum class Threads {
  calling,  // the thread that made the Counter (not OpenMP workers, not the test runner's)
  all,      // every thread of the process
};

/// Counts from construction to stop() (page faults always in the whole
/// process). One Counter at a time.
class Counter {
 public:
  explicit Counter(Threads threads = Threads::calling);
  /// Stops counting. C allocations from `runtime_libraries` (file names, e.g.
  /// the BLAS library's) count as the runtime's, besides the OpenMP runtimes
  /// and the dynamic loader.
  Allocations stop(const std::vector<std::string>& runtime_libraries = {});

 private:
  long faults_at_start_;
};

}  // namespace tenet::testing
