#!/usr/bin/env bash
# Creates (or reuses) the project's Python virtual environment in .venv with
# PyTorch and the tools the Python package, its tests and the benchmarks use.
# Idempotent: an existing environment with everything installed is reused;
# pip's cache makes a fresh install quick after the first.
# Usage: scripts/venv.sh            (prints nothing but progress; source
#        .venv/bin/activate or call .venv/bin/python afterwards)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${TENET_VENV:-.venv}
PY=${PYTHON:-python3}
requirements=(
  "torch>=2.3"
  torchvision   # the model zoo (python -m tenet.zoo) and its tests
  transformers  # the same: BERT, GPT-2, T5 and ViT from tiny configs
  numpy
  safetensors
  pytest
  pytest-xdist  # scripts/python-test.sh runs the suite on every core (at most 4)
  matplotlib
  "pybind11>=2.11"
  "scikit-build-core>=0.8"
  ninja
  cmake
  "lizard>=1.17"  # function lengths for scripts/check-budgets.sh
)
if [ ! -x "$VENV/bin/python" ]; then
  echo "venv: creating $VENV"
  "$PY" -m venv "$VENV"
fi
if "$VENV/bin/python" - "${requirements[@]}" <<'PYEOF' 2>/dev/null; then
import sys
from importlib.metadata import version, PackageNotFoundError
import re
for req in sys.argv[1:]:
    name = re.split(r"[<>=]", req)[0]
    version(name)  # raises when missing
PYEOF
  echo "venv: $VENV has everything"
else
  echo "venv: installing ${requirements[*]}"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q "${requirements[@]}"
fi
