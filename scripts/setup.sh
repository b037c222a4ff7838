#!/usr/bin/env bash
# Installs what Tenet needs on a fresh Debian machine (idempotent; quick when
# everything is already there). Run as root or with sudo available.
set -euo pipefail

packages=(
  build-essential g++ cmake ninja-build pkg-config
  ccache                             # scripts/test.sh: compiled objects reused across CI runs
  clang libclang-rt-dev libomp-dev   # clang build, libFuzzer, OpenMP for clang
  libgtest-dev libgmock-dev          # tests
  libopenblas0-openmp                # the GEMM library generated code links (runtime/tenet_gemm.h)
  libdnnl-dev                        # oneDNN: float32 GEMMs of generated code (runtime/tenet_gemm.h)
  zlib1g-dev                         # train/: gzipped MNIST IDX files
  nlohmann-json3-dev                 # train/json.cpp: safetensors headers (emitted projects ship the header)
  clang-format                       # format check
  libopenmpi-dev openmpi-bin          # data-parallel training across processes (train/team.h; optional)
  python3 python3-venv python3-dev # .venv (scripts/venv.sh): PyTorch, the Python package
)

missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: system packages present"
fi
