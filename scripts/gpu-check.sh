#!/usr/bin/env bash
# The GPU check of issue 29 (docs/cuda.md, tier T2), one command on a GPU
# machine (CUDA 13; its image is described in the device tool's KINDS.md), results in
# ${OUT:-gpu-results}/: the machine, the build, the CUDA test suite on the
# GPU (every zoo program against the interpreter, the grid emulator and a
# second run), compute-sanitizer's memcheck and racecheck on a training-size
# gradient, and the CPU scaling rows of issue 30 (CapsNet's and the MNIST
# CNN's training steps at 1 to 16 threads against PyTorch eager and
# torch.compile: scaling.md and scaling.png).
#
# Prepare here first: bash scripts/gpu-prepare.sh (the .debs the image
# lacks), then run with gpu-debs carried:
#   bash scripts/gpu-check.sh            # about 9 minutes on 16 cores
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-results}
mkdir -p "$out"
log() { echo "[gpu-check $(date +%T)] $*" | tee -a "$out/summary.txt"; }

# The packages the image lacks, unpacked beside the tree (never over /).
if compgen -G "gpu-debs/*.deb" >/dev/null; then
  for deb in gpu-debs/*.deb; do dpkg -x "$deb" gpu-root; done
  prefix=$PWD/gpu-root/usr
  # zlib1g-dev's libz.so points at Debian's exact libz.so.1.x: the image's instead.
  libz=$(ls /lib/x86_64-linux-gnu/libz.so.1 /usr/lib/x86_64-linux-gnu/libz.so.1 2>/dev/null | head -1)
  [ -n "$libz" ] && ln -sf "$libz" "$prefix/lib/x86_64-linux-gnu/libz.so"
  export CMAKE_PREFIX_PATH=$prefix:$prefix/lib/x86_64-linux-gnu/cmake:${CMAKE_PREFIX_PATH:-}
  export CPATH=$prefix/include:${CPATH:-}
  export LIBRARY_PATH=$prefix/lib/x86_64-linux-gnu:${LIBRARY_PATH:-}
fi
# oneDNN and OpenBLAS from gpu-debs where the image lacks them (the CPU rows
# measure what a Debian machine runs); else tenet_gemm.h's loops.
libs=$PWD/gpu-root/usr/lib/x86_64-linux-gnu
pick() { for f in "$@"; do [ -e "$f" ] && { echo "$f"; return; }; done; echo none; }
export TENET_DNNL_LIBRARY=$(pick /usr/lib/x86_64-linux-gnu/libdnnl.so.2 "$libs/libdnnl.so.2")
export TENET_BLAS_LIBRARY=$(pick /usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0 \
  "$libs/openblas-openmp/libopenblas.so.0")
export LD_LIBRARY_PATH=$libs:$libs/openblas-openmp:${LD_LIBRARY_PATH:-}
export TENET_CACHE_DIR=$PWD/build-gpu/tenet-cache

{ nvidia-smi; nvcc --version; g++ --version | head -1; nproc; } >"$out/machine.txt" 2>&1
log "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"

log "build"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release >"$out/build.txt" 2>&1 &&
  ninja -C build-gpu -j"$(nproc)" tenet test_cuda tenet_bench >>"$out/build.txt" 2>&1
status=$?
log "build: exit $status"
[ $status -eq 0 ] || { tail -40 "$out/build.txt"; exit 1; }

log "test_cuda (the zoo on the GPU, the emulator, NVRTC)"
build-gpu/tests/test_cuda >"$out/test_cuda.txt" 2>&1
log "test_cuda: exit $? ($(grep -c '^\[       OK' "$out/test_cuda.txt") ok, $(grep -c '^\[  FAILED' "$out/test_cuda.txt") failed lines, $(grep -c '^\[  SKIPPED' "$out/test_cuda.txt") skipped lines)"
grep -E '^\[gpu zoo\]|^\[nvrtc\]' "$out/test_cuda.txt" | tee -a "$out/summary.txt"

# compute-sanitizer on a training-size step: the MNIST CNN's gradient.
run=(build-gpu/tools/tenet run models/mnist_cnn.tn --grad --sizes B=8 --backend cuda)
for tool in memcheck racecheck; do
  log "compute-sanitizer --tool $tool"
  compute-sanitizer --tool "$tool" --error-exitcode 9 "${run[@]}" >"$out/$tool.txt" 2>&1
  log "$tool: exit $? ($(grep -m1 'ERROR SUMMARY' "$out/$tool.txt"))"
done

# Issue 30's CPU rows: the same build on this machine's cores, quick mode
# (2 timed steps per measurement), every framework at each thread count.
log "CPU scaling: bench.py --threads 1,2,4,8,16 (oneDNN: $TENET_DNNL_LIBRARY)"
PYTHONUNBUFFERED=1 python3 bench/bench.py --quick --build-dir build-gpu --out gpu-scaling \
  --only '^(capsnet_train_b100|mnist_cnn_train_b64)$' --frameworks tenet,eager,compile \
  --threads 1,2,4,8,16 >gpu-scaling.log 2>&1
status=$?
log "bench: exit $status"
[ $status -eq 0 ] || tail -30 gpu-scaling.log | tee -a "$out/summary.txt"
cp gpu-scaling/scaling.md gpu-scaling/scaling.png "$out/" 2>/dev/null
sed -n '/## Median time per step/,/!\[/p' gpu-scaling/scaling.md | tee -a "$out/summary.txt"

log "done: $out"
