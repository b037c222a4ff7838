"""One training epoch of the MNIST CNN on full MNIST: Tenet's trainer against
PyTorch eager on the same machine and threads (issue 17's closing number).

    python bench/mnist_epoch.py --data ../shared/data/mnist [--threads 2]

Both train models/mnist_cnn.tn's network (bench/models_torch.MnistCNN) for
one epoch of 60000 images, batch 64, Adam at lr 1e-3, dropout masks drawn
every step, shuffled batches; then each reports its test accuracy. Tenet's
time is `tenet train`'s own epoch time (its log's "epoch 1 ... s" line), which
excludes compiling; PyTorch's is the wall time of its training loop. Run it
with nothing else on the cores (never beside a build or CI).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models_torch import MnistCNN  # noqa: E402
from workloads import read_idx  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def torch_epoch(data, threads, batch=64, seed=1):
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    images = read_idx(os.path.join(data, "train-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(data, "train-labels-idx1-ubyte.gz"))
    x = torch.from_numpy(images.astype(np.float32) / 255.0).unsqueeze(1)
    y = torch.from_numpy(labels.astype(np.int64))
    net = MnistCNN()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    order = torch.from_numpy(rng.permutation(len(x)))
    start = time.perf_counter()
    net.train()
    for first in range(0, len(x), batch):
        idx = order[first:first + batch]
        b = len(idx)
        drop1 = torch.bernoulli(torch.full((b, 64, 12, 12), 0.75)) / 0.75
        drop2 = torch.bernoulli(torch.full((b, 128), 0.5)) / 0.5
        opt.zero_grad(set_to_none=True)
        loss = F.nll_loss(net.log_probs(x[idx], drop1, drop2), y[idx])
        loss.backward()
        opt.step()
    seconds = time.perf_counter() - start
    test_x = read_idx(os.path.join(data, "t10k-images-idx3-ubyte.gz"))
    test_y = read_idx(os.path.join(data, "t10k-labels-idx1-ubyte.gz"))
    net.eval()
    with torch.no_grad():
        tx = torch.from_numpy(test_x.astype(np.float32) / 255.0).unsqueeze(1)
        pred = torch.cat([net(tx[i:i + 1000]).argmax(1) for i in range(0, len(tx), 1000)])
    accuracy = float((pred.numpy() == test_y).mean())
    return seconds, accuracy


def tenet_epoch(data, threads, tenet):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    with tempfile.TemporaryDirectory() as out:
        cmd = [tenet, "train", os.path.join(ROOT, "models", "mnist_cnn.tn"), "--epochs", "1",
               "--data", data, "--out", os.path.join(out, "run")]
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit("tenet train failed:\n" + proc.stderr)
    log = proc.stdout + proc.stderr
    return wall, log


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="folder with the four MNIST IDX files")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tenet", default=os.path.join(ROOT, "build", "tools", "tenet"))
    args = parser.parse_args()
    wall, log = tenet_epoch(args.data, args.threads, args.tenet)
    print(log.strip())
    print("tenet train: %.1f s wall for the whole command (compile, epoch, test)" % wall)
    seconds, accuracy = torch_epoch(args.data, args.threads)
    print("pytorch eager: epoch %.1f s, test accuracy %.2f%%" % (seconds, 100 * accuracy))


if __name__ == "__main__":
    main()
