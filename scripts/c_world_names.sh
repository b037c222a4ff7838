#!/usr/bin/env bash
# Writes tests/codegen/data/c_world_names.txt: names of the C/C++/OpenMP/BLAS
# world that a .tn program might use for a function, tensor, size or index, and
# that generated code must therefore survive (tests/codegen/names_test.cpp
# compiles programs using every one of them). Sorted and deduplicated; one name
# per line. Gathered from this machine:
#   - the dynamic symbols that libc, libm, libgomp and libstdc++ define (the C++
#     ones demangled to their outermost name: "std::cout" gives "cout");
#   - OpenBLAS's CBLAS and BLAS entry points (not its LAPACK, which would
#     triple the list with more of the same);
#   - every macro that the headers generated code includes define (and a few
#     more headers a C user of an emitted project is likely to include), as
#     GCC sees them with GNU extensions on (-std=gnu++17 defines "linux",
#     "unix"; CMake's default for an emitted project);
#   - C++ keywords and the identifiers generated code declares itself.
# Names containing "__" are left out but for a few examples: C and C++ reserve
# them all to the implementation, and Tenet renames every one of them by the
# same rule (they are a quarter of the list otherwise).
# Run it again after upgrading the toolchain; the test only needs the list.
set -euo pipefail
cd "$(dirname "$0")/.."
out=tests/codegen/data/c_world_names.txt
lib=/usr/lib/x86_64-linux-gnu
blas=${TENET_BLAS_LIBRARY:-$lib/openblas-openmp/libopenblas.so.0}
identifier='^[A-Za-z_][A-Za-z0-9_]*$'
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

defined_symbols() { nm -D --defined-only "$1" | awk '{print $3}' | sed 's/@.*//'; }

{
  for l in libc.so.6 libm.so.6 libgomp.so.1; do defined_symbols "$lib/$l"; done

  defined_symbols "$blas" | grep -E '^(cblas_|openblas_)|^i?[sdcz]{1,2}(gemm|gemv|ger[cu]?|axpy|axpby|dot[cu]?|scal|copy|swap|nrm2|asum|amax|amin|trsm|trmm|symm|syrk|syr2k|hemm|herk|her2k|rotg?|rotmg?|[sg]bmv|spmv|spr2?|symv|syr2?|t[bp][ms]v|tr[ms]v|hbmv|hemv|her2?|hpmv|hpr2?|omatcopy|imatcopy|gemmt)_?$'

  nm -DC --defined-only "$lib/libstdc++.so.6" | cut -d' ' -f3- | sed 's/@.*//' |
    grep -Ev '^(typeinfo|vtable|VTT|guard|construction|non-virtual|virtual|transaction)' |
    sed -E 's/^std::(__cxx11::|__gnu_cxx_ldbl128::|_V2::|__debug::|__exception_ptr::)*//' |
    sed -E 's/[<(: ].*//'

  cat >"$tmp/includes.cpp" <<'EOF'
#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cfloat>
#include <climits>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <new>
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <omp.h>
#include "tenet_runtime.h"
#include "tenet_gemm.h"
EOF
  g++ -std=gnu++17 -fopenmp -DTENET_GEMM_CBLAS -Iruntime -dM -E "$tmp/includes.cpp" |
    awk '$1 == "#define" {print $2}' | sed 's/(.*//'

  # C++ keywords and alternative tokens.
  printf '%s\n' alignas alignof and and_eq asm auto bitand bitor bool break case catch char \
    char8_t char16_t char32_t class compl concept const consteval constexpr constinit \
    const_cast continue co_await co_return co_yield decltype default delete do double \
    dynamic_cast else enum explicit export extern false final float for friend goto if \
    import inline int long module mutable namespace new noexcept not not_eq nullptr \
    operator or or_eq override private protected public register reinterpret_cast requires \
    restrict return short signed sizeof static static_assert static_cast struct switch \
    template this thread_local throw true try typedef typeid typename union unsigned using \
    virtual void volatile wchar_t while xor xor_eq _Pragma _Bool _Complex _Imaginary \
    __restrict__ __attribute__

  # What generated code names itself, and the examples of issue 13.
  printf '%s\n' std tenet int8_t uint8_t int16_t int32_t int64_t uint32_t uint64_t size_t \
    acc acc_1 offsets tenants workspace sizes buffers i gemm_m gemm_n gemm_k main \
    omp_get_thread_num GOMP_parallel INT64_MAX M_PI HUGE_VAL fmaxf aligned_alloc errno \
    assert NULL EOF stdin unix linux i386 major minor I tenet_runtime tenet_gemm \
    tenet_kernels runtime gemm kernels
} | grep -E "$identifier" | grep -v __ >"$tmp/all"
printf '%s\n' __cxa_atexit __errno_location __stack_chk_fail __libc_start_main __GLIBC__ \
  __cplusplus __restrict__ __attribute__ __STDC__ __x a__b b__ __ >>"$tmp/all"
LC_ALL=C sort -u "$tmp/all" >"$tmp/names"

mkdir -p "$(dirname "$out")"
mv "$tmp/names" "$out"
echo "$(wc -l <"$out") names in $out"
