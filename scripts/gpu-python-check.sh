#!/usr/bin/env bash
# The Python half of the GPU check (docs/cuda.md, "Device memory"): builds the
# Python package on the GPU machine with its own Python (3.12, PyTorch, pybind11,
# scikit-build-core and pytest are in the image) into /tmp/tenet-site, then runs
# the GPU targets' Python tests: tenet.compile, tenet.torch_op (autograd,
# gradcheck) and Program.module() on CUDA tensors, nothing copied, against
# PyTorch. Results in ${OUT:-gpu-results}/python.txt. Run after
# scripts/gpu-check.sh in the same session (it reuses gpu-root/ and the
# environment it sets up), with gpu-debs carried:
#   bash scripts/gpu-python-check.sh        # about 4 minutes on 16 cores
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-results}
mkdir -p "$out"
log() { echo "[gpu-python $(date +%T)] $*" | tee -a "$out/summary.txt"; }

if compgen -G "gpu-debs/*.deb" >/dev/null && [ ! -d gpu-root ]; then
  for deb in gpu-debs/*.deb; do dpkg -x "$deb" gpu-root; done
fi
prefix=$PWD/gpu-root/usr
export CMAKE_PREFIX_PATH=$prefix:$prefix/lib/x86_64-linux-gnu/cmake:${CMAKE_PREFIX_PATH:-}
export CPATH=$prefix/include:${CPATH:-}
export LIBRARY_PATH=$prefix/lib/x86_64-linux-gnu:${LIBRARY_PATH:-}
export LD_LIBRARY_PATH=$prefix/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export CMAKE_BUILD_PARALLEL_LEVEL=$(nproc)
export TENET_CACHE_DIR=$PWD/build-gpu/tenet-cache-python
# The CPU target's GEMMs as runtime/tenet_gemm.h's loops: these are correctness checks.
export TENET_BLAS_LIBRARY=none TENET_DNNL_LIBRARY=none

log "pip install (no build isolation: the image's pybind11 and scikit-build-core)"
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/tenet-site . \
  >"$out/python-build.txt" 2>&1
status=$?
log "pip install: exit $status"
[ $status -eq 0 ] || { tail -30 "$out/python-build.txt" | tee -a "$out/summary.txt"; exit 1; }

log "pytest tests/python/test_cuda_targets.py (CUDA tensors, the emulator, NVRTC)"
(cd tests/python && PYTHONPATH=/tmp/tenet-site timeout 600 python3 -m pytest -q -p no:cacheprovider \
  test_cuda_targets.py) >"$out/python.txt" 2>&1
log "pytest: exit $? ($(tail -1 "$out/python.txt"))"
