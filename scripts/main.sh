#!/usr/bin/env bash
# The main job: install what is needed, build, then train CapsNet
# (models/capsnet.tn: Sabour, Frosst and Hinton, 2017) from scratch for one
# epoch on 3000 images of the bundled MNIST sample (data/mnist-sample), and
# report its accuracy on the sample's 1000 test images and the time it took.
# Tenet derives the gradient of the model's loss, compiles it to C++ (JIT,
# cached in build/tenet-cache) and trains with Adam; see docs/training.md.
# BUILD_DIR (default build) is the build folder, as for scripts/build.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Only the command-line tool: the tests build in scripts/test.sh.
BUILD_TARGETS=tenet bash scripts/build.sh
build=${BUILD_DIR:-build}
export TENET_CACHE_DIR=${TENET_CACHE_DIR:-$PWD/$build/tenet-cache}
# Some environments force OpenBLAS onto its Haswell kernels, 40% slower on
# AVX-512 machines (docs/performance.md); let it choose.
unset OPENBLAS_CORETYPE

tenet=$build/tools/tenet
run=$build/runs/capsnet-main
echo "== tenet check models/capsnet.tn"
$tenet check models/capsnet.tn
echo
echo "== tenet train models/capsnet.tn: 1 epoch of 3000 sample images, batch 50 ($(nproc) cores)"
start=$(date +%s.%N)
$tenet train models/capsnet.tn --data data/mnist-sample --limit-train 3000 --epochs 1 \
  --batch 50 --checkpoint-every 0 --out "$run" --overwrite
end=$(date +%s.%N)
echo
echo "== tenet eval models/capsnet.tn --checkpoint $run"
result=$($tenet eval models/capsnet.tn --checkpoint "$run" --data data/mnist-sample)
echo "$result"
echo
echo "CapsNet after one epoch of 3000 MNIST images: ${result%% [*}; training took" \
  "$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.0f", e - s }') s" \
  "(compilation included) on $(nproc) cores."
