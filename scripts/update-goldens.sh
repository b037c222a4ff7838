#!/usr/bin/env bash
# Rewrites every golden file from the current output; review with git diff.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
(cd build && TENET_UPDATE_GOLDENS=1 ctest -j"$(nproc)" >/dev/null || true)
git status --short tests/golden tests/passes
