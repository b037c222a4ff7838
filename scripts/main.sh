#!/usr/bin/env bash
# The main job: install what is needed, build, then compile and run the
# CapsNet forward pass at batch 2 with the generated C++ and with the
# interpreter, and print their outputs (they must agree).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
export TENET_CACHE_DIR=${TENET_CACHE_DIR:-$PWD/build/tenet-cache}
echo "== tenet check models/capsnet.tn"
build/tools/tenet check models/capsnet.tn
echo "== tenet run models/capsnet.tn --sizes B=2 --backend cpp"
time build/tools/tenet run models/capsnet.tn --sizes B=2 --backend cpp
echo "== tenet run models/capsnet.tn --sizes B=2 --backend interp"
time build/tools/tenet run models/capsnet.tn --sizes B=2 --backend interp
