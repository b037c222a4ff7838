"""A binarised MNIST network from plain PyTorch to a C++ program, through Tenet.

The network is written in PyTorch as anyone would write it: sign activations and
sign weights with a straight-through estimator, ``h + (torch.sign(h) - h).detach()``
of ``h`` clamped to [-1, 1] (the sign forward; backward, the identity inside
[-1, 1]). ``tenet.from_torch`` imports it and ``Program.module()`` gives it back as a
module whose forward and backward are Tenet's generated code, trained with a
torch.optim optimiser. A small architecture search trains one network per hidden
width on the bundled MNIST sample and keeps the best by held-out accuracy.
``Program.emit`` writes the winner as a standalone C++ project (generated code, C API,
weights); CMake builds it with ``import_bnn/classify.cpp``, a small C++ program that
links the emitted library and classifies the test digits: no Python runs there. Each
step prints what it took.

    .venv/bin/python examples/import_bnn.py            # widths 64, 128, 256: 3 epochs each
    .venv/bin/python examples/import_bnn.py --quick    # widths 32, 64: 1 epoch of 2000 images
"""

import argparse
import gzip
import math
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

import tenet

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "mnist-sample"
CLASSIFY_SOURCE = ROOT / "examples" / "import_bnn"


def binarize(t):
    """sign(t) forward; backward, the gradient passes where |t| <= 1 and stops elsewhere
    (the straight-through estimator of Courbariaux et al. 2016, BinaryNet)."""
    t = torch.clamp(t, -1, 1)
    return t + (torch.sign(t) - t).detach()


class BinaryMLP(torch.nn.Module):
    """784 -> width -> width -> 10. The first layer keeps real weights (as in most
    binarised networks); every hidden activation and the later layers' weights are +-1,
    so those layers compute sums of +-1 products, scaled by 1/sqrt(width)."""

    def __init__(self, width):
        super().__init__()
        self.scale = 1 / math.sqrt(width)
        self.fc1 = torch.nn.Linear(784, width)
        self.fc2 = torch.nn.Linear(width, width)
        self.fc3 = torch.nn.Linear(width, 10)

    def forward(self, x):
        h = binarize(self.fc1(x.flatten(1)))
        h = binarize(F.linear(h, binarize(self.fc2.weight)) * self.scale + self.fc2.bias)
        return F.linear(h, binarize(self.fc3.weight)) * self.scale + self.fc3.bias


def read_idx(path):
    """An IDX file of unsigned bytes (gzipped) as a numpy array."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    rank = data[3]
    dims = [int.from_bytes(data[4 + 4 * d: 8 + 4 * d], "big") for d in range(rank)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * rank).reshape(dims)


def mnist(split, limit=None):
    """Images float32 [N, 1, 28, 28] in [0, 1] and int64 labels of the bundled sample."""
    images = read_idx(DATA / f"{split}-images-idx3-ubyte.gz")[:limit]
    labels = read_idx(DATA / f"{split}-labels-idx1-ubyte.gz")[:limit]
    return (torch.from_numpy(images.astype(np.float32) / 255).unsqueeze(1),
            torch.from_numpy(labels.astype(np.int64)))


def accuracy(module, images, labels):
    module.eval()
    with torch.no_grad():
        return (module(images).argmax(1) == labels).float().mean().item()


@dataclass
class Candidate:
    width: int
    model: object       # the PyTorch module
    program: object     # tenet.from_torch's Program
    module: object      # program.module(): Tenet's code, the model's parameters
    validation: float
    import_seconds: float
    train_seconds: float
    steps: int


def train_candidate(width, train_set, validation_set, epochs, batch, lr, seed):
    """Imports a BinaryMLP of this width, trains it through Tenet and measures it."""
    torch.manual_seed(seed)
    model = BinaryMLP(width)
    start = time.perf_counter()
    program = tenet.from_torch(model, (train_set[0][:2],))
    module = program.module()  # Tenet's forward and backward, the model's parameters
    imported = time.perf_counter()
    optimiser = torch.optim.Adam(module.parameters(), lr=lr)
    images, labels = train_set
    steps = 0
    for _ in range(epochs):
        module.train()
        order = torch.randperm(len(labels))
        for first in range(0, len(labels), batch):
            chosen = order[first:first + batch]
            loss = F.cross_entropy(module(images[chosen]), labels[chosen])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            steps += 1
    trained = time.perf_counter()
    return Candidate(width, model, program, module, accuracy(module, *validation_set),
                     imported - start, trained - imported, steps)


def eager_forward_seconds(model, images, batch):
    """The time PyTorch eager takes for the forward passes classify makes (after one
    warm-up pass), for comparison."""
    model.eval()
    with torch.no_grad():
        model(images[:batch])
        start = time.perf_counter()
        for first in range(0, len(images), batch):
            model(images[first:first + batch])
    return time.perf_counter() - start


def cmake():
    found = shutil.which("cmake", path=os.path.dirname(sys.executable)) or shutil.which("cmake")
    if found is None:
        raise SystemExit("import_bnn: cmake is needed (pip install cmake, or the system's)")
    return found


def shown(path):
    """A path relative to the repository when it is inside it."""
    path = pathlib.Path(path).resolve()
    return str(path.relative_to(ROOT)) if ROOT in path.parents else str(path)


def run(command, **options):
    result = subprocess.run(command, capture_output=True, text=True, **options)
    if result.returncode != 0:
        raise SystemExit(f"import_bnn: {' '.join(map(str, command))} failed:\n"
                         f"{result.stdout}{result.stderr}")
    return result.stdout


@dataclass
class Result:
    widths: list
    validation: dict
    winner: int
    torch_test_accuracy: float
    cpp_test_accuracy: float
    cpp_output: str
    seconds: dict


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short search (tests, CI)")
    parser.add_argument("--widths", type=int, nargs="+", help="hidden widths to search")
    parser.add_argument("--epochs", type=int, help="epochs per candidate")
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "runs" / "import_bnn",
                        help="where the project and its build go (reused: an unchanged "
                             "project is not rebuilt)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    widths = args.widths or ([32, 64] if args.quick else [64, 128, 256])
    epochs = args.epochs or (1 if args.quick else 3)
    train_images = 2000 if args.quick else 4000
    seconds = {}

    # The sample's 5000 training digits: the first ones train, the last 1000 choose.
    images, labels = mnist("train")
    train_set = (images[:train_images], labels[:train_images])
    validation_set = (images[-1000:], labels[-1000:])
    test_set = mnist("t10k")
    print(f"data: {len(train_set[1])} training, {len(validation_set[1])} validation, "
          f"{len(test_set[1])} test digits ({DATA.relative_to(ROOT)})")

    candidates = []
    for width in widths:
        candidate = train_candidate(width, train_set, validation_set, epochs, batch=50,
                                    lr=0.005, seed=args.seed)
        candidates.append(candidate)
        seconds[f"width {width}"] = candidate.import_seconds + candidate.train_seconds
        print(f"width {width:4d}: import {candidate.import_seconds:4.1f} s, train "
              f"{candidate.steps} steps through Tenet {candidate.train_seconds:5.1f} s "
              f"(with the JIT compilation or its cache), validation accuracy "
              f"{100 * candidate.validation:.2f}%")
    best = max(candidates, key=lambda c: c.validation)
    torch_test = accuracy(best.module, *test_set)
    print(f"winner: width {best.width}, test accuracy in PyTorch (Tenet's module) "
          f"{100 * torch_test:.2f}%")

    start = time.perf_counter()
    project = best.program.emit(args.out / "bnn", name="bnn", overwrite=True,
                                options={"batch": 50, "lr": 0.005})
    seconds["emit"] = time.perf_counter() - start
    print(f"emit: {shown(project.directory)} ({os.path.basename(project.header)}, "
          f"{os.path.basename(project.weights)}) in {seconds['emit']:.1f} s")

    build = args.out / "build"
    start = time.perf_counter()
    run([cmake(), "-S", CLASSIFY_SOURCE, "-B", build,
         f"-DBNN_PROJECT={os.path.abspath(project.directory)}"])
    run([cmake(), "--build", build, "-j2"])
    seconds["build"] = time.perf_counter() - start
    print(f"build: cmake configure + build of classify and the emitted library "
          f"{seconds['build']:.1f} s")

    start = time.perf_counter()
    classify = [build / "classify", project.weights, DATA / "t10k-images-idx3-ubyte.gz",
                DATA / "t10k-labels-idx1-ubyte.gz"]
    output = run(classify)
    seconds["classify"] = time.perf_counter() - start
    print(f"C++: {' '.join(shown(c) for c in classify)}")
    print("".join(f"  {line}\n" for line in output.splitlines()), end="")
    print(f"C++ classification (process start to exit): {seconds['classify']:.2f} s; "
          f"PyTorch eager's forward of the same batches: "
          f"{1e3 * eager_forward_seconds(best.model, test_set[0], 100):.1f} ms")
    correct, total = re.search(r"^accuracy .* \((\d+)/(\d+)\)$", output, re.M).groups()
    return Result(widths=widths, validation={c.width: c.validation for c in candidates},
                  winner=best.width, torch_test_accuracy=torch_test,
                  cpp_test_accuracy=int(correct) / int(total), cpp_output=output,
                  seconds=seconds)


if __name__ == "__main__":
    main()
