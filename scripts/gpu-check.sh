#!/usr/bin/env bash
# The GPU check of issue 29 (docs/cuda.md, tier T2), one command on a GPU
# machine (CUDA 13; its image is described in the device tool's KINDS.md), results in
# ${OUT:-gpu-results}/: the machine, the build, the CUDA test suite on the
# GPU (every zoo program against the interpreter, the grid emulator and a
# second run), compute-sanitizer's memcheck and racecheck on a training-size
# gradient, and the CPU and GPU benchmark rows where they exist.
#
# Prepare here first: bash scripts/gpu-prepare.sh (the .debs the image
# lacks), then run with gpu-debs carried:
#   bash scripts/gpu-check.sh            # about 5 minutes on 16 cores
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
# No CPU BLAS there: generated CPU code uses tenet_gemm.h's loops.
[ -e /usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0 ] || export TENET_BLAS_LIBRARY=none
[ -e /usr/lib/x86_64-linux-gnu/libdnnl.so.2 ] || export TENET_DNNL_LIBRARY=none
export TENET_CACHE_DIR=$PWD/build-gpu/tenet-cache

{ nvidia-smi; nvcc --version; g++ --version | head -1; nproc; } >"$out/machine.txt" 2>&1
log "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"

log "build"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release >"$out/build.txt" 2>&1 &&
  ninja -C build-gpu -j"$(nproc)" tenet test_cuda >>"$out/build.txt" 2>&1
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

log "done: $out"
