#!/usr/bin/env bash
# Configures and builds Tenet into build/ (Release with debug info, warnings as errors).
# Usage: scripts/build.sh [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTENET_WERROR=ON "$@" >/dev/null
ninja -C "$BUILD_DIR" -j"$(nproc)"
