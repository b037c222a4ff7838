#!/usr/bin/env bash
# Fuzzes Tenet's readers of untrusted input with libFuzzer for a bounded time.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     (default 60 s, every target)
#
# Targets (tests/fuzz/fuzz_<target>.cpp):
#   frontend      parse + check of .tn source
#   binder        a program bound at fuzzed sizes and input shapes, interpreted
#                 when small, emitted as C++ (tests/fuzz/binder_input.h)
#   npy           .npy inputs (support/npy.h)
#   safetensors   checkpoints and weights (train/safetensors.h)
#   idx           MNIST IDX files, raw or gzipped (train/mnist.h)
#   ir            the IR's text form (ir/ir_parser.h)
# SECONDS is the budget of the whole run, shared equally by the targets named.
# Set TENET_FUZZ_RUNS=N to stop each target after N executions instead (the
# long runs outside CI; the time budget then still caps each target), and
# TENET_FUZZ_FLAGS to pass more libFuzzer flags (e.g. -jobs=1).
#
# Builds the targets with clang (ASan + UBSan + libFuzzer) into build-fuzz/
# (TENET_FUZZ_BUILD=DIR: into DIR instead, e.g. the test script's sanitizer
# build, configured with -DTENET_FUZZ=ON, whose objects the targets then share),
# then runs each on its seed corpus tests/fuzz/corpus-<target>/ (new inputs it
# finds are kept in <build>/corpus/<target>/ for the next run). Exits
# non-zero if it finds a crash, a timeout or a leak; each such input is copied
# into tests/fuzz/regressions/<target>/, which the test suites replay once the
# bug is fixed. Prints each target's execution count.
set -euo pipefail
seconds=${1:-60}
shift || true
all_targets=(frontend binder npy safetensors idx ir)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  [ -f "$(dirname "$0")/../tests/fuzz/fuzz_$t.cpp" ] || { echo "fuzz: no target '$t' (have: ${all_targets[*]})" >&2; exit 2; }
done
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/${TENET_FUZZ_BUILD:-build-fuzz}
per_target=$(( seconds / ${#targets[@]} ))
[ "$per_target" -lt 1 ] && per_target=1

# A tree already configured with the fuzz targets keeps its configuration (naming
# the compiler again would make CMake start the tree afresh).
if ! grep -qs '^TENET_FUZZ:BOOL=ON$' "$build/CMakeCache.txt"; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DTENET_FUZZ=ON >/dev/null
fi
ninja -C "$build" -j"$(nproc)" $(printf 'fuzz_%s ' "${targets[@]}")

failed=0
total=0
for t in "${targets[@]}"; do
  corpus=$build/corpus/$t
  artifacts=$build/artifacts/$t
  log=$build/fuzz_$t.log
  mkdir -p "$corpus" "$artifacts"
  rm -f "$artifacts"/*
  extra=()
  [ -f "$root/tests/fuzz/tenet_$t.dict" ] && extra+=(-dict="$root/tests/fuzz/tenet_$t.dict")
  case $t in frontend | binder) extra+=(-dict="$root/tests/fuzz/tenet.dict") ;; esac
  [ -n "${TENET_FUZZ_RUNS:-}" ] && extra+=(-runs="$TENET_FUZZ_RUNS")
  status=0
  # shellcheck disable=SC2086  # TENET_FUZZ_FLAGS is a list of flags
  "$build/tests/fuzz/fuzz_$t" "$corpus" "$root/tests/fuzz/corpus-$t" "${extra[@]}" \
    -max_len=4096 -timeout=5 -rss_limit_mb=2048 -max_total_time="$per_target" \
    -print_final_stats=1 -artifact_prefix="$artifacts/" ${TENET_FUZZ_FLAGS:-} >"$log" 2>&1 ||
    status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  total=$(( total + ${runs:-0} ))
  echo "fuzz: $t: ${runs:-?} executions in at most ${per_target}s (log: $log)"
  found=0
  for f in "$artifacts"/*; do
    [ -e "$f" ] || continue
    mkdir -p "$root/tests/fuzz/regressions/$t"
    cp "$f" "$root/tests/fuzz/regressions/$t/$(basename "$f")"
    echo "fuzz: saved $(basename "$f") to tests/fuzz/regressions/$t/" >&2
    found=1
  done
  if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
    tail -40 "$log" >&2
    echo "fuzz: $t FAILED (status $status); reproduce with $build/tests/fuzz/fuzz_$t FILE" >&2
    failed=1
  fi
done
echo "fuzz: $total executions in all"
[ "$failed" -eq 0 ] || exit 1
echo "fuzz: no crash in ${seconds}s"
