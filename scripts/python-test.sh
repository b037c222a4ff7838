#!/usr/bin/env bash
# The Python package's CI step: the project's virtual environment
# (scripts/venv.sh), `pip install .` into it (scikit-build-core keeps its build
# folder in build-python/, so an unchanged tree rebuilds nothing), then the
# pytest suite tests/python (PyTorch equivalence, torch.compile, autograd, the
# C++ dispatcher caller, the examples).
# JIT builds are cached in build-python/tenet-cache, the C++ test extension in
# build-python/torch-extensions: a second run compiles nothing.
# Usage: scripts/python-test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/venv.sh
VENV=${TENET_VENV:-.venv}
unset OPENBLAS_CORETYPE  # the environment may force slow AVX2 kernels
export TENET_CACHE_DIR=${TENET_CACHE_DIR:-$PWD/build-python/tenet-cache}
# OpenMP threads (PyTorch's and the generated code's share one runtime) sleep
# instead of spinning when idle: on a machine busy with other jobs, spinning
# made the examples' training steps 10x slower. Results do not change.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
echo "== pip install . (build-python/)"
# --no-build-isolation: build with the venv's scikit-build-core, pybind11,
# cmake and ninja (no download, and a stable build folder between runs).
"$VENV/bin/python" -m pip install -q --no-build-isolation .
# One pytest worker per core, at most 4 (pytest-xdist): most of the suite waits on
# g++ compiling generated code, one compiler process per test. The JIT cache is
# safe to share (entries appear by atomic rename); TENET_PYTEST_WORKERS=1 runs the
# suite in one process.
workers=${TENET_PYTEST_WORKERS:-$(nproc)}
[ "$workers" -gt 4 ] && workers=4
echo "== pytest tests/python ($workers workers)"
"$VENV/bin/python" -m pytest tests/python -q -n "$workers" "$@"
