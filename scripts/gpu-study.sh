#!/usr/bin/env bash
# The abstraction study's GPU half (issue 32, docs/study.md), on a GPU machine:
# the PyTorch levels (eager, TorchScript, torch.compile default and
# reduce-overhead) and the LibTorch C++ program, training steps at batch 1 and
# 64 and the resolution sweep at 112, with kernel launches per step and device
# memory. Tenet's levels on the GPU wait for Program.module() on CUDA (issue 29).
# Uses the machine's own Python and PyTorch (no package registry there) and
# CMake; results in ${OUT:-gpu-results}/study/results.jsonl, which
# bench/study_report.py --device cuda turns into docs/study.md's GPU tables
# (copy it into bench/results/study/ first). About 5 minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-results}
mkdir -p "$out/study"
PYTHONUNBUFFERED=1 python3 bench/study.py --quick --device cuda \
  --levels eager,script,compile,compile-reduce-overhead,libtorch --modes train \
  --batches 1,64 --resolutions 28,112 --out "$out/study" 2>&1 | tee "$out/study/log.txt"
