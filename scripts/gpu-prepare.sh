#!/usr/bin/env bash
# Run here, before a GPU check: fetches the Debian packages Tenet builds with
# that the GPU machine's image lacks (GoogleTest, nlohmann-json, zlib's
# headers; oneDNN and OpenBLAS for the CPU scaling rows) into gpu-debs/ (ignored by git, carried to the machine), where
# scripts/gpu-check.sh unpacks them with dpkg -x. The image has CUDA,
# g++, CMake and ninja (the device tool's KINDS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p gpu-debs
cd gpu-debs
apt-get download libgtest-dev nlohmann-json3-dev zlib1g-dev libdnnl2 libdnnl-dev \
  libopenblas0-openmp libgfortran5 >/dev/null
ls -l ./*.deb
