#!/usr/bin/env bash
# The benchmark against PyTorch (docs/benchmark.md), from a fresh Debian
# machine: installs the system packages (setup.sh), builds (build.sh), makes
# the Python environment with PyTorch (venv.sh), then runs bench/bench.py,
# which prints the markdown tables and writes them, the raw measurements and
# a plot to bench/results/. Not part of the test suite.
#
#   bash scripts/bench.sh [--quick] [--only REGEX] [--group LIST]
#                         [--frameworks tenet,eager,compile,script]
#
# --quick takes 1 warm-up and 2 timed steps per measurement (to see that
# everything works); --group selects groups of workloads (capsnet, cnn, model,
# lltm, op, layer; models = every whole model, layers = the layer rows);
# `python bench/bench.py --help` lists every option. The imported models'
# Tenet programs come from tenet.from_torch: the `tenet` package is installed
# into the venv first.
# Exits 2 when Tenet's and PyTorch's results disagree on a workload, 1 when a
# measurement or an import fails (each a failed row of the tables, with its
# message under "Failures"; the other rows are still measured and written).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
bash scripts/venv.sh
# The `tenet` package, for tenet.from_torch (the imported workloads), as
# scripts/python-test.sh installs it: build-python/ keeps its build folder, so
# an unchanged tree rebuilds nothing.
"${TENET_VENV:-.venv}/bin/python" -m pip install -q --no-build-isolation .
BUILD_DIR=${BUILD_DIR:-build}
export TENET_CACHE_DIR=${TENET_CACHE_DIR:-$PWD/$BUILD_DIR/tenet-cache}
# bench.py gives every framework 2 threads (OMP_NUM_THREADS, --threads) and
# unsets OPENBLAS_CORETYPE, so that OpenBLAS chooses its own kernels (some
# environments force slower AVX2 ones through it).
exec "${TENET_VENV:-.venv}/bin/python" bench/bench.py --build-dir "$BUILD_DIR" "$@"
