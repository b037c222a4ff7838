#!/usr/bin/env bash
# Measures single-precision GEMM of the CapsNet shapes with each BLAS library
# Debian ships, at 1 and 2 threads, and in "split" mode (our own OpenMP split
# of the rows, the library single-threaded inside it). Installs the libraries
# first (root or sudo). Not part of the test suite; takes a few minutes.
#
#   bash bench/gemm/run.sh [OUTPUT_FILE]    (default: bench/gemm/results.txt)
# GEMM_BENCH_SECONDS (default 1) is the time budget per shape and configuration.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# OpenBLAS picks its kernels for the CPU it finds unless OPENBLAS_CORETYPE
# forces one; some environments force Haswell (AVX2), which costs 40% here.
unset OPENBLAS_CORETYPE
out="${1:-$here/results.txt}"

packages=(libopenblas0-openmp libopenblas0-pthread libblis4-openmp libblis4-pthread libdnnl2)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

bin="$(mktemp -d)/gemm_bench"
g++ -O2 -fopenmp -std=c++17 -o "$bin" "$here/gemm_bench.cpp" -ldl

libdir=/usr/lib/x86_64-linux-gnu
libraries=(
  "openblas-openmp $libdir/openblas-openmp/libopenblas.so.0 cblas"
  "openblas-pthread $libdir/openblas-pthread/libopenblas.so.0 cblas"
  "blis-openmp $libdir/blis-openmp/libblis.so.4 cblas"
  "blis-pthread $libdir/blis-pthread/libblis.so.4 cblas"
  "onednn $libdir/libdnnl.so.2 dnnl"
)

{
  echo "# GEMM benchmark: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores, $(date -u +%Y-%m-%d)"
  for entry in "${libraries[@]}"; do
    read -r name path api <<<"$entry"
    for config in "1 lib" "2 lib" "1 split"; do
      read -r threads mode <<<"$config"
      label="$name threads=$threads"
      [ "$mode" = split ] && label="$name split(2 x 1 thread)"
      echo "## $label"
      OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads BLIS_NUM_THREADS=$threads \
        "$bin" "$path" "$api" "$mode"
    done
  done
} | tee "$out"
