#!/usr/bin/env bash
# Configures and builds Tenet into build/ (Release with debug info, warnings as errors).
# Usage: scripts/build.sh [extra cmake args...]
# BUILD_TARGETS (default: everything, tests included) names the targets to build,
# e.g. BUILD_TARGETS=tenet for the command-line tool alone (scripts/main.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTENET_WERROR=ON "$@" >/dev/null
# shellcheck disable=SC2086  # a list of target names
ninja -C "$BUILD_DIR" -j"$(nproc)" ${BUILD_TARGETS:-}
