#!/usr/bin/env bash
# The abstraction study (issue 32; docs/study.md): the MNIST CNN, ResNet-20 and
# CapsNet at each level (PyTorch eager, TorchScript, torch.compile, a LibTorch
# C++ program, Tenet through Program.module()), over batch sizes and input
# resolutions; then the tables and plots of docs/study.md. Not part of the
# test suite. Sets up what it needs (the venv with PyTorch, Tenet's package).
# Usage: bash scripts/study.sh [--quick] [--device cpu|cuda] [bench/study.py options]
# Results accumulate in bench/results/study/results.jsonl (a measurement there
# is not run again: delete the file for a fresh run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/venv.sh > /dev/null
VENV=${TENET_VENV:-.venv}
device=cpu
for ((i = 1; i <= $#; i++)); do
  if [ "${!i}" = "--device" ]; then j=$((i + 1)); device=${!j}; fi
done
if ! "$VENV/bin/python" -c "import tenet" 2> /dev/null; then
  echo "study: installing Tenet's Python package into $VENV"
  "$VENV/bin/python" -m pip install -q --no-build-isolation .
fi
"$VENV/bin/python" bench/study.py "$@"
"$VENV/bin/python" bench/study_report.py --device "$device"
