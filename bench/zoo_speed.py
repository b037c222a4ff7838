"""Training steps of torchvision models at small batches: eager PyTorch against Tenet's
Program.module(), whose autograd backward starts from the values its forward saved, and
against the same module with the recomputing backward (the operator's ``saving``
removed) and the general build (``module(specialise=False)``: the batch size not
compiled in), in one process, one run (docs/import.md, "Speed at batch 2").

    .venv/bin/python bench/zoo_speed.py [MODEL ...] [--batch 2] [--size 64] [--threads 2]

Each row: the median of 9 steps (forward, ``sum().backward()``) after a warm-up that
compiles. Gradients accumulate over the steps on both sides, as in a loop without
``zero_grad``.
"""

import argparse
import copy
import statistics
import time
import warnings

import torch
import torchvision

import tenet

MODELS = ["resnet18", "mobilenet_v2", "shufflenet_v2_x0_5", "densenet121"]


def median_ms(step, repeats=9):
    step()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e3


def row(name, batch, size):
    torch.manual_seed(0)
    model = torchvision.models.get_model(name, weights=None).train()
    x = torch.randn(batch, 3, size, size)
    eager = copy.deepcopy(model)
    program = tenet.from_torch(copy.deepcopy(model), (x,))
    module = program.module()
    general = program.module(specialise=False)
    eager_ms = median_ms(lambda: eager(x).sum().backward())
    saved_ms = median_ms(lambda: module(x).sum().backward())
    general_ms = median_ms(lambda: general(x).sum().backward())
    ops = list(module._ops.values())  # the operators the module made (one per mode and size)
    savings = [op.saving for op in ops]
    for op in ops:
        op.saving = None  # the operators' recomputing backward
    try:
        recompute_ms = median_ms(lambda: module(x).sum().backward())
    finally:
        for op, saving in zip(ops, savings):
            op.saving = saving
    return (f"| {name} | {eager_ms:.1f} ms | {recompute_ms:.1f} ms | {general_ms:.1f} ms | "
            f"{saved_ms:.1f} ms | {eager_ms / saved_ms:.2f}x |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", default=MODELS)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    options = parser.parse_args()
    torch.set_num_threads(options.threads)
    print("| model | eager | Tenet, recomputing backward | Tenet, general build | "
          "Tenet | Tenet / eager |")
    print("|---|---:|---:|---:|---:|---:|")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in options.models:
            print(row(name, options.batch, options.size), flush=True)


if __name__ == "__main__":
    main()
