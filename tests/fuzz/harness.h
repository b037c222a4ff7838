/// \file
/// Defines LLVMFuzzerTestOneInput for a libFuzzer target from one check of
/// checks.h: any exception the check lets escape (a property violation, an
/// internal error) is printed and aborts, so libFuzzer keeps the input.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#define TENET_FUZZ_TARGET(check)                                            \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { \
    try {                                                                   \
      check(std::string_view(reinterpret_cast<const char*>(data), size));   \
    } catch (const std::exception& e) {                                     \
      std::fprintf(stderr, "%s\n", e.what());                               \
      std::abort();                                                         \
    }                                                                       \
    return 0;                                                               \
  }
