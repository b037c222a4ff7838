"""Shared setup for the Python tests (pytest tests/python).

Expects the package installed (`pip install .`; scripts/python-test.sh does
it). JIT builds go to $TENET_CACHE_DIR, by default build-python/tenet-cache in
the repository, so a second run compiles nothing.
"""

import gzip
import os
import pathlib

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
os.environ.setdefault("TENET_CACHE_DIR", str(REPO / "build-python" / "tenet-cache"))
os.environ.pop("OPENBLAS_CORETYPE", None)

MNIST_SAMPLE = REPO / "data" / "mnist-sample"


def model_source(relative):
    """The text of a program under models/."""
    return (REPO / "models" / relative).read_text()


def _read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    rank = magic & 0xFF
    assert magic >> 8 == 0x08, f"{path}: not an unsigned-byte IDX file"
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


def _sample_file(kind):
    """The bundled sample's test-set file of a kind ('images' or 'labels')."""
    found = sorted(MNIST_SAMPLE.glob(f"t10k-{kind}*.gz")) or sorted(MNIST_SAMPLE.glob(f"*{kind}*.gz"))
    assert found, f"no gzipped IDX {kind} in {MNIST_SAMPLE} (the bundled MNIST sample)"
    return found[0]


def mnist_batch(count):
    """The first `count` digits of the bundled MNIST sample: float32 images in [0, 1]
    of shape (count, 1, 28, 28) and int64 labels."""
    images = _read_idx(_sample_file("images"))[:count]
    labels = _read_idx(_sample_file("labels"))[:count]
    return (images.astype(np.float32)[:, None] / 255.0, labels.astype(np.int64))


@pytest.fixture(scope="session")
def torch():
    import torch as torch_module
    torch_module.manual_seed(0)
    return torch_module
