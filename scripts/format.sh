#!/usr/bin/env bash
# Formats the C++ sources with clang-format, or with --check only reports.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.cpp' '*.h' | grep -v '^tests/golden/' || true)
if [ "${1:-}" = "--check" ]; then
  if ! clang-format --dry-run --Werror $files; then
    echo "format: run scripts/format.sh to fix" >&2
    exit 1
  fi
  echo "format: ok"
else
  clang-format -i $files
fi
