// libFuzzer target: the binder, on fuzzed sizes and input shapes.
//
// The input is a program, then a line "---", then lines that bind it:
//
//   def f(float(N, M) x) -> (y) { y(i, j) = x(i, j) * 2 }
//   ---
//   N=4611686018427387904
//   #0: 0 4611686018427387904
//
// "NAME=INT" gives a size parameter (any 64-bit value, negative too) and
// "#K: D0 D1 ..." the shape of input K (an input with no such line gets its
// declared shape under the sizes, when they bind it). For each function the
// harness checks the sizes alone (ir::check_sizes), binds inputs of those
// shapes (ir::bind_sizes) and the compiled code's read bounds, and, when the
// work is small, runs the interpreter, then optimises the module and emits
// its C++ (the memory plan). Expected outcomes are results or user errors
// (CompileError, BindError); an InternalError, any other exception, a crash
// or a sanitizer report is a finding (tests/fuzz/regressions/binder/ replays them).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fuzz/binder_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    tenet::fuzz::run_binder_input(text);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::abort();
  }
  return 0;
}
