#!/usr/bin/env bash
# Proves a refactor changes no output: prints every .tn program of the tree
# (models, benchmarks, test data) at the IR, source and C++ stages, and the
# gradient program of each of its functions at the source, IR and C++ stages,
# with two tenet binaries, and diffs the results.
#   bash bench/scale/compare_outputs.sh OLD_TENET NEW_TENET [OUT_DIR]
# Exit status 0 when every output (and every error message) is identical.
set -uo pipefail
old=$1 new=$2 out=${3:-$(mktemp -d)}
cd "$(dirname "$0")/../.."
mkdir -p "$out/old" "$out/new"
dump() {  # binary, folder
  local bin=$1 dir=$2 f key fn stage
  while IFS= read -r f; do
    key=${f//\//_}
    for stage in ir source cpp; do
      "$bin" print "$f" --stage "$stage" >"$dir/$key.$stage" 2>&1
      echo "exit $?" >>"$dir/$key.$stage"
    done
    for fn in $(sed -n 's/^def \([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$f"); do
      for stage in source ir cpp; do
        "$bin" print "$f" --grad "$fn" --vjp --stage "$stage" >"$dir/$key.$fn.grad.$stage" 2>&1
        echo "exit $?" >>"$dir/$key.$fn.grad.$stage"
      done
    done
  done < <(find models bench tests -name '*.tn' | sort)
}
dump "$old" "$out/old"
dump "$new" "$out/new"
echo "$(ls "$out/new" | wc -l) outputs in $out"
diff -r "$out/old" "$out/new" && echo "identical"
