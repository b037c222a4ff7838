/// \file
/// Counting the heap allocations and page faults of a piece of code, for the
/// no-allocation guarantee of codegen::Executable.
///
/// The test binary replaces the global operator new (every form), and, where
/// no sanitizer runtime owns malloc, the C allocation functions (forwarding
/// to glibc's). While a Counter runs, the calling thread's allocations are
/// counted, and each C allocation's caller is recorded so that it can be
/// attributed to a library: the OpenMP runtime and the BLAS library keep
/// small per-call bookkeeping on the heap (OpenBLAS's threaded GEMM driver
/// allocates its job table on every call, libgomp some of its parallel
/// regions' state, the dynamic loader now and then the libraries' thread-local
/// storage), which is theirs, not Tenet's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tenet::codegen::testing {

/// Whether malloc is glibc's, so that C allocations (malloc & co) are counted
/// and page faults mean what they mean in a release build: not under
/// AddressSanitizer, whose runtime owns malloc and quarantines freed memory.
bool glibc_allocator();

struct Allocations {
  int64_t cxx = 0;  // operator new, any form
  /// C allocations by caller: the OpenMP runtime, the BLAS library or the
  /// dynamic loader; and everything else (the generated code, Tenet, the
  /// standard library).
  int64_t c_runtime = 0;
  int64_t c_other = 0;
  std::vector<std::string> other_callers;  // the libraries of the c_other ones
  int64_t minor_page_faults = 0;           // of the whole process (getrusage)
};

/// Counts from construction to stop(), in the calling thread (page faults in
/// the whole process). Not reentrant.
class Counter {
 public:
  Counter();
  Allocations stop();

 private:
  long faults_at_start_;
};

}  // namespace tenet::codegen::testing
