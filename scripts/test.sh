#!/usr/bin/env bash
# Installs what is needed, then builds and runs every test:
#   1. g++ build (warnings are errors), all CTest suites
#   2. clang build (warnings are errors) of the same suites under
#      AddressSanitizer + UndefinedBehaviorSanitizer
#   3. the fuzz targets (front end, binder, .npy, safetensors, IDX, IR text),
#      built with libFuzzer in the sanitizer build of stage 2, a bounded fuzz
#      run of each
#   4. clang-format check; size budgets (files <= 600 lines, functions <= 80:
#      scripts/check-budgets.sh)
#   5. the Python package: `pip install .` into .venv (with PyTorch), pytest
# Set TENET_FUZZ_SECONDS (default 60) to change the fuzz budget.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc)
# Every build of this script (g++, sanitizers, fuzzers, the Python package) compiles
# through ccache: a later run on the same machine at the same path (CI on a clean
# clone) reuses the objects whose sources and flags did not change. (Not with
# CCACHE_BASEDIR: its relative paths would end up in __FILE__, which internal errors
# print relative to the source tree.) TENET_CCACHE=0 turns it off.
if [ "${TENET_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CMAKE_CUDA_COMPILER_LAUNCHER=ccache
  ccache --zero-stats >/dev/null
fi
start=$SECONDS
stage() { echo "== [$1] $2 (at $(( (SECONDS - start) / 60 )) min)"; }
echo "disk: $(df -h --output=avail . | tail -1 | tr -d ' ') free here (a clean run needs about 16G at its peak)"

stage 1/5 "build and test (g++)"
bash scripts/build.sh
(cd build && ctest -j"$jobs" --output-on-failure)

stage 2/5 "build (clang) and test under ASan + UBSan"
# Without MPI (the g++ build above trains under mpirun): this build checks that
# a Tenet without it refuses an MPI launch and says how to get one. With the
# fuzzers' coverage instrumentation (TENET_FUZZ): stage 3 builds the fuzz
# targets in this tree from the same objects instead of compiling the library
# a third time (the suites run with the coverage hooks as no-ops).
# Its suites share the g++ build's JIT cache (TENET_TEST_CACHE_DIR): generated
# code compiled above by the same compiler (TENET_CXX below) is not compiled again.
BUILD_DIR=build-asan bash scripts/build.sh -DTENET_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DTENET_MPI=OFF -DTENET_FUZZ=ON \
  -DTENET_TEST_CACHE_DIR="$PWD/build/tenet-cache"
# The g++ build's compiler, as its JIT names it (the cache key holds the name).
gxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' build/CMakeCache.txt)
# The JIT compiles generated code with that g++ here (libgomp): LeakSanitizer's exit-time
# tracer crashes when libomp threads from clang-compiled JIT code are still alive.
# It crashes the same way ("Tracer caught signal 11") at the exit of a process
# whose generated code called oneDNN, so this build's GEMMs use OpenBLAS
# (TENET_DNNL_LIBRARY=none); the g++ build above runs every test with oneDNN.
# OMP_WAIT_POLICY=passive: OpenMP's idle threads sleep rather than spin when the
# tracer stops them at exit (tried against its crashes, which came with OpenMP
# threads alive; whether it avoids them is not yet known: the rerun stays).
asan_ctest() {
  (cd build-asan && TENET_CXX="$gxx" TENET_DNNL_LIBRARY=none ASAN_OPTIONS=detect_leaks=1 \
    OMP_WAIT_POLICY=passive \
    UBSAN_OPTIONS=print_stacktrace=1 ctest -j"$jobs" --output-on-failure "$@")
}
# Even with libgomp the tracer still crashes now and then at exit, after every test
# of the suite has passed, or at the exit of a `tenet` process a test runs (which
# then fails that test: seen once in Training.ReducedCapsNetLearns, whose run had
# finished). Such a suite (and only such a suite) runs once more, its failed tests
# with it, so that a real failure fails twice: a leak ("detected memory leaks"), an
# ASan or UBSan report, or a failed test without the tracer's crash fails the stage
# at once.
asan_log=build-asan/ctest.log
if ! asan_ctest 2>&1 | tee "$asan_log"; then
  if grep -q "LeakSanitizer has encountered a fatal error" "$asan_log" &&
    ! grep -q -e "detected memory leaks" -e "ERROR: AddressSanitizer" -e "runtime error:" \
      "$asan_log"; then
    echo "LeakSanitizer's exit-time tracer crashed (not a leak); running the failed suites again"
    asan_ctest --rerun-failed
  else
    exit 1
  fi
fi

# On CI (a clean clone, CI set) each finished build is removed once its stages have
# passed: the sanitizer build and PyTorch's install together need more disk than
# one stage at a time.
free_stage_build() {
  if [ -n "${CI:-}" ]; then rm -rf "$1"; fi
}

stage 3/5 "fuzz the readers of untrusted input (clang, libFuzzer)"
TENET_FUZZ_BUILD=build-asan bash scripts/fuzz.sh "${TENET_FUZZ_SECONDS:-60}"
free_stage_build build-asan

stage 4/5 "clang-format, size budgets"
bash scripts/format.sh --check
bash scripts/check-budgets.sh

stage 5/5 "Python package and PyTorch operators"
bash scripts/python-test.sh
echo "all tests passed in $(( (SECONDS - start) / 60 )) min"
if [ -n "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then ccache --show-stats | grep -i -e hit -e miss || true; fi
