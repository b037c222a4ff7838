#!/usr/bin/env bash
# Fails when a C++ source file is over 600 lines or a function over 80 lines (the
# span of its definition, lambdas inside included), except the functions and files
# listed in scripts/function-budget-exceptions.txt up to their listed length.
# Rules, what is measured and why tests/ keep only the file budget: the comment at
# the top of scripts/check-budgets.py. Function spans come from lizard, installed
# into .venv by scripts/venv.sh (run here when .venv lacks it). Takes seconds.
# Usage: scripts/check-budgets.sh
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${TENET_VENV:-.venv}
if ! "$VENV/bin/python" -c "import lizard" 2>/dev/null; then
  bash scripts/venv.sh
fi
"$VENV/bin/python" scripts/check-budgets.py --exceptions scripts/function-budget-exceptions.txt
