#include "tests/support/alloc/allocation_counter.h"

#include <dlfcn.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define TENET_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TENET_TEST_ASAN 1
#endif
#endif

#ifndef TENET_TEST_ASAN
// glibc exports its allocator under these names for replacements to call.
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);
}
#endif

namespace {

/// The allocator underneath, bypassing the counting C functions below.
void* raw_malloc(std::size_t n) {
#ifdef TENET_TEST_ASAN
  return std::malloc(n);
#else
  return __libc_malloc(n);
#endif
}

void* raw_aligned_alloc(std::size_t align, std::size_t n) {
#ifdef TENET_TEST_ASAN
  return std::aligned_alloc(align, n);
#else
  return __libc_memalign(align, n);
#endif
}

// Whether this thread counts (Threads::calling), or every thread does
// (Threads::all). Constant-initialised, so reading them never allocates.
thread_local bool counting_here = false;
std::atomic<bool> counting_everywhere{false};
std::atomic<int64_t> cxx_allocations{0};
std::atomic<int64_t> c_allocations{0};
// Enough for oneDNN's convolutions, which allocate about 100 argument tables a
// step (counted as the runtime's); the arrays are written once when a Counter
// starts, so that recording a caller takes no page fault.
constexpr int kMaxCallers = 1 << 14;
void* c_callers[kMaxCallers];
void* cxx_callers[kMaxCallers];

bool counting() {
  return counting_here || counting_everywhere.load(std::memory_order_relaxed);
}

/// Counts an operator new call from `caller` (its return address).
void note_cxx_allocation(void* caller) {
  if (!counting()) return;
  const int64_t i = cxx_allocations.fetch_add(1, std::memory_order_relaxed);
  if (i < kMaxCallers) cxx_callers[i] = caller;
}

void* counted_new(std::size_t n, void* caller) {
  note_cxx_allocation(caller);
  return raw_malloc(n ? n : 1);
}

void* counted_aligned_new(std::size_t n, std::align_val_t align, void* caller) {
  note_cxx_allocation(caller);
  const std::size_t a = static_cast<std::size_t>(align);
  return raw_aligned_alloc(a, (n + a - 1) / a * a);
}

void* or_throw(void* p) {
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace

// Every form of operator new and delete, so that each allocation pairs with
// its deallocation whatever runtime (a sanitizer's included) is linked.
void* operator new(std::size_t n) {
  return or_throw(counted_new(n, __builtin_return_address(0)));
}
void* operator new[](std::size_t n) {
  return or_throw(counted_new(n, __builtin_return_address(0)));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return counted_new(n, __builtin_return_address(0));
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return counted_new(n, __builtin_return_address(0));
}
void* operator new(std::size_t n, std::align_val_t a) {
  return or_throw(counted_aligned_new(n, a, __builtin_return_address(0)));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return or_throw(counted_aligned_new(n, a, __builtin_return_address(0)));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted_aligned_new(n, a, __builtin_return_address(0));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted_aligned_new(n, a, __builtin_return_address(0));
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}

#ifndef TENET_TEST_ASAN
// The C allocation functions, forwarding to glibc's own, so every pointer is
// glibc's whoever frees it.

namespace {
void note_c_allocation(void* caller) {
  if (!counting()) return;
  const int64_t i = c_allocations.fetch_add(1, std::memory_order_relaxed);
  if (i < kMaxCallers) c_callers[i] = caller;
}
}  // namespace

extern "C" {
void* malloc(std::size_t n) noexcept {
  note_c_allocation(__builtin_return_address(0));
  return __libc_malloc(n);
}
void* calloc(std::size_t count, std::size_t size) noexcept {
  note_c_allocation(__builtin_return_address(0));
  return __libc_calloc(count, size);
}
void* realloc(void* p, std::size_t n) noexcept {
  note_c_allocation(__builtin_return_address(0));
  return __libc_realloc(p, n);
}
void* aligned_alloc(std::size_t align, std::size_t n) noexcept {
  note_c_allocation(__builtin_return_address(0));
  return __libc_memalign(align, n);
}
void* memalign(std::size_t align, std::size_t n) noexcept {
  note_c_allocation(__builtin_return_address(0));
  return __libc_memalign(align, n);
}
int posix_memalign(void** out, std::size_t align, std::size_t n) noexcept {
  note_c_allocation(__builtin_return_address(0));
  void* p = __libc_memalign(align, n);
  if (!p) return 12;  // ENOMEM
  *out = p;
  return 0;
}
void free(void* p) noexcept {
  __libc_free(p);
}
}
#endif

namespace tenet::testing {

namespace {

long minor_faults() {
  rusage r;
  getrusage(RUSAGE_SELF, &r);
  return r.ru_minflt;
}

/// The file name of the library holding `address` ("?" when unknown).
std::string library_of(const void* address) {
  Dl_info info;
  if (dladdr(address, &info) == 0 || !info.dli_fname) return "?";
  return info.dli_fname;
}

std::string file_name(const std::string& path) {
  return path.substr(path.rfind('/') + 1);
}

/// The OpenMP runtimes (libgomp, LLVM's libomp), the dynamic loader (which
/// allocates the thread-local storage of libraries, lazily, in each thread),
/// and the named others.
bool is_runtime_library(const std::string& path, const std::vector<std::string>& others) {
  const std::string name = file_name(path);
  for (const char* runtime : {"libgomp", "libomp", "libiomp", "ld-linux"})
    if (name.rfind(runtime, 0) == 0) return true;
  for (const std::string& other : others)
    if (name == file_name(other)) return true;
  return false;
}

}  // namespace

bool glibc_allocator() {
#ifdef TENET_TEST_ASAN
  return false;
#else
  return true;
#endif
}

Counter::Counter(Threads threads) {
  cxx_allocations = 0;
  c_allocations = 0;
  std::fill(std::begin(cxx_callers), std::end(cxx_callers), nullptr);
  std::fill(std::begin(c_callers), std::end(c_callers), nullptr);
  faults_at_start_ = minor_faults();
  if (threads == Threads::all)
    counting_everywhere = true;
  else
    counting_here = true;
}

Allocations Counter::stop(const std::vector<std::string>& runtime_libraries) {
  counting_here = false;
  counting_everywhere = false;
  Allocations a;
  a.minor_page_faults = minor_faults() - faults_at_start_;
  const int64_t cxx_count = cxx_allocations;
  for (int64_t i = 0; i < cxx_count; ++i) {
    const std::string library = i < kMaxCallers ? library_of(cxx_callers[i]) : "?";
    if (is_runtime_library(library, runtime_libraries)) {
      ++a.cxx_runtime;
    } else {
      ++a.cxx;
      a.other_callers.push_back(library);
    }
  }
  const int64_t c_count = c_allocations;
  for (int64_t i = 0; i < c_count; ++i) {
    const std::string library = i < kMaxCallers ? library_of(c_callers[i]) : "?";
    if (is_runtime_library(library, runtime_libraries)) {
      ++a.c_runtime;
    } else {
      ++a.c_other;
      a.other_callers.push_back(library);
    }
  }
  return a;
}

}  // namespace tenet::testing
