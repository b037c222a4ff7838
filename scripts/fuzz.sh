#!/usr/bin/env bash
# Fuzzes the front end (parse + check) with libFuzzer for a bounded time.
#
#   scripts/fuzz.sh [SECONDS]     (default 60)
#
# Builds tests/fuzz/fuzz_frontend with clang into build-fuzz/, then runs it on
# the seed corpus tests/fuzz/corpus/ (new inputs it finds are kept in
# build-fuzz/corpus/ for the next run). Exits non-zero if it finds a crash, a
# timeout or a leak; each such input is copied into tests/fuzz/regressions/,
# which test_lang replays (fuzz_regression_test.cpp) once the bug is fixed.
set -euo pipefail
seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DTENET_FUZZ=ON >/dev/null
ninja -C "$build" -j2 fuzz_frontend

corpus=$build/corpus
artifacts=$build/artifacts
mkdir -p "$corpus" "$artifacts"
rm -f "$artifacts"/*

status=0
"$build/tests/fuzz/fuzz_frontend" "$corpus" "$root/tests/fuzz/corpus" \
  -dict="$root/tests/fuzz/tenet.dict" -max_len=4096 -timeout=5 -rss_limit_mb=2048 \
  -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$artifacts/" || status=$?

found=0
for f in "$artifacts"/*; do
  [ -e "$f" ] || continue
  cp "$f" "$root/tests/fuzz/regressions/$(basename "$f")"
  echo "fuzz: saved $(basename "$f") to tests/fuzz/regressions/" >&2
  found=1
done
if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
  echo "fuzz: FAILED (status $status); reproduce with $build/tests/fuzz/fuzz_frontend FILE" >&2
  exit 1
fi
echo "fuzz: no crash in ${seconds}s"
