#!/usr/bin/env bash
# Fuzzes Tenet with libFuzzer for a bounded time, under ASan and UBSan.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     (default: 60 seconds, every target)
#
# Targets (tests/fuzz/): frontend (parse + check a program) and binder (a
# program bound at fuzzed sizes and input shapes, interpreted when small,
# emitted as C++). The SECONDS are shared evenly among the targets, so CI's
# `scripts/fuzz.sh 60` stays a minute. Builds them with clang into
# build-fuzz/, then runs each on its seed corpus (tests/fuzz/corpus/ and
# tests/fuzz/corpus_binder/; new inputs it finds are kept in
# build-fuzz/corpus[-binder]/ for the next run). Exits non-zero if it finds a
# crash, a timeout or a leak; each such input is copied into
# tests/fuzz/regressions/ (frontend, replayed by test_lang) or
# tests/fuzz/regressions/binder/ (replayed by test_codegen) to be kept once
# the bug is fixed. Extra libFuzzer flags: $TENET_FUZZ_FLAGS (e.g. -jobs=1 -runs=N).
set -euo pipefail
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(frontend binder)
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DTENET_FUZZ=ON >/dev/null
ninja -C "$build" -j2 $(printf 'fuzz_%s ' "${targets[@]}")

share=$((seconds / ${#targets[@]}))
[ "$share" -ge 1 ] || share=1
failed=0
for target in "${targets[@]}"; do
  case $target in
    frontend)
      seeds=$root/tests/fuzz/corpus corpus=$build/corpus keep=$root/tests/fuzz/regressions ;;
    binder)
      seeds=$root/tests/fuzz/corpus_binder corpus=$build/corpus-binder
      keep=$root/tests/fuzz/regressions/binder ;;
    *)
      echo "fuzz: unknown target '$target' (frontend, binder)" >&2
      exit 2 ;;
  esac
  artifacts=$build/artifacts-$target
  mkdir -p "$corpus" "$artifacts"
  rm -f "$artifacts"/*

  status=0
  # shellcheck disable=SC2086  # TENET_FUZZ_FLAGS is a list of flags
  "$build/tests/fuzz/fuzz_$target" "$corpus" "$seeds" \
    -dict="$root/tests/fuzz/tenet.dict" -max_len=4096 -timeout=5 -rss_limit_mb=2048 \
    -max_total_time="$share" -print_final_stats=1 -artifact_prefix="$artifacts/" \
    ${TENET_FUZZ_FLAGS:-} || status=$?

  found=0
  for f in "$artifacts"/*; do
    [ -e "$f" ] || continue
    cp "$f" "$keep/$(basename "$f")"
    echo "fuzz: saved $(basename "$f") to ${keep#"$root"/}/" >&2
    found=1
  done
  if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
    echo "fuzz: $target FAILED (status $status); reproduce with $build/tests/fuzz/fuzz_$target FILE" >&2
    failed=1
  else
    echo "fuzz: $target: no crash in ${share}s"
  fi
done
exit "$failed"
