#!/usr/bin/env bash
# Writes the generated C++ of every model and zoo program into OUT_DIR:
# each file's functions (`print --stage cpp`), the gradient of each function
# (`print --grad FN [--vjp] --stage cpp`), and for a trainable model the unit the
# trainer compiles (gradient and evaluation together). Run it before and after
# a change that should not alter generated code, then `diff -r BEFORE AFTER`.
#
#   scripts/snapshot-generated.sh OUT_DIR [TENET_BINARY]
set -euo pipefail

out=${1:?usage: scripts/snapshot-generated.sh OUT_DIR [TENET_BINARY]}
root=$(cd "$(dirname "$0")/.." && pwd)
tenet=${2:-$root/build/tools/tenet}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for file in "$root"/models/*.tn "$root"/models/zoo/*.tn; do
  rel=${file#"$root"/models/}
  name=${rel%.tn}
  name=${name//\//.}
  "$tenet" print "$file" --stage cpp >"$out/$name.cpp" 2>"$out/$name.cpp.err" || true
  for fn in $(sed -n 's/^def \([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$file"); do
    "$tenet" print "$file" --grad "$fn" --stage cpp >"$out/$name.$fn.grad.cpp" \
      2>"$out/$name.$fn.grad.err" || true
    "$tenet" print "$file" --grad "$fn" --vjp --stage cpp >"$out/$name.$fn.vjp.cpp" \
      2>"$out/$name.$fn.vjp.err" || true
  done
  if grep -q '^# @train' "$file"; then
    rm -rf "$work/cache" "$work/run"
    TENET_CACHE_DIR="$work/cache" "$tenet" train "$file" --epochs 1 --batch 4 \
      --limit-train 4 --limit-test 4 --out "$work/run" >/dev/null 2>"$out/$name.train.err" || true
    cat "$work"/cache/*/tenet_kernels.cpp >"$out/$name.train.cpp" 2>/dev/null || true
  fi
done
# Empty error files say nothing; keep only the ones with a message.
find "$out" -name '*.err' -empty -delete
echo "wrote $(find "$out" -type f | wc -l) files to $out"
