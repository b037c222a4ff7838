"""A PyTorch CapsNet whose dynamic routing is Tenet's, trained for a few steps.

Everything is ordinary PyTorch (convolutions, squash, the capsule transform,
the margin loss, Adam) except the routing layer: models/routing.tn, three
iterations of routing-by-agreement (softmax over the digit capsules for each
input capsule, weighted sum, squash, agreement), as a PyTorch operator made
by tenet.torch_op. Its backward, through all three unrolled iterations, is
the one Tenet derives. The network is a small CapsNet (64 conv1 channels,
8 primary capsule maps) so that a few steps run in seconds on a CPU.

    python examples/capsnet_torch.py [--steps 30] [--data data/mnist-sample]
"""

import argparse
import gzip
import pathlib
import time

import numpy as np
import torch
import torch.nn.functional as F

import tenet

ROOT = pathlib.Path(__file__).resolve().parents[1]


def squash(s):
    n2 = (s * s).sum(-1, keepdim=True)
    return s * torch.sqrt(n2 + 1e-7) / (1 + n2)


class TenetRouting(torch.nn.Module):
    """uh (B, I, J, E) -> v (B, J, E): routing.tn's `routing`, 3 iterations."""

    def __init__(self):
        super().__init__()
        self.op = tenet.torch_op((ROOT / "models" / "routing.tn").read_text(), "routing")

    def forward(self, u_hat):
        return self.op(u_hat)


class SmallCapsNet(torch.nn.Module):
    def __init__(self, conv_channels=64, primary_maps=8, primary_dim=8, digit_dim=16):
        super().__init__()
        self.primary_maps, self.primary_dim = primary_maps, primary_dim
        self.conv1 = torch.nn.Conv2d(1, conv_channels, 9)
        self.primary = torch.nn.Conv2d(conv_channels, primary_maps * primary_dim, 9, stride=2)
        capsules = primary_maps * 6 * 6
        self.W = torch.nn.Parameter(0.05 * torch.randn(capsules, 10, digit_dim, primary_dim))
        self.routing = TenetRouting()

    def forward(self, image):
        batch = image.shape[0]
        h = F.relu(self.conv1(image))
        p = self.primary(h).view(batch, self.primary_maps, self.primary_dim, 6, 6)
        u = squash(p.permute(0, 1, 3, 4, 2).reshape(batch, -1, self.primary_dim))
        u_hat = torch.einsum("iked,bid->bike", self.W, u)
        v = self.routing(u_hat)  # Tenet
        return torch.sqrt((v * v).sum(-1) + 1e-7)  # class scores: capsule lengths


def margin_loss(lengths, labels):
    target = F.one_hot(labels, 10).to(lengths.dtype)
    per_example = (target * F.relu(0.9 - lengths) ** 2
                   + 0.5 * (1 - target) * F.relu(lengths - 0.1) ** 2).sum(1)
    return per_example.mean()


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    rank = data[3]
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


def load_mnist(folder):
    """Images (N, 1, 28, 28) in [0, 1] and int64 labels from gzipped IDX files (the
    training files of the folder when it has them, else any)."""
    folder = pathlib.Path(folder)

    def find(kind):
        found = sorted(folder.glob(f"train-{kind}*.gz")) or sorted(folder.glob(f"*{kind}*.gz"))
        if not found:
            raise SystemExit(f"no gzipped IDX {kind} file in {folder}")
        return found[0]

    images = torch.from_numpy(read_idx(find("images")).astype(np.float32) / 255.0)
    labels = torch.from_numpy(read_idx(find("labels")).astype(np.int64))
    return images.unsqueeze(1), labels


def main(steps=30, batch=32, data=ROOT / "data" / "mnist-sample", seed=0, log_every=5):
    """Trains for `steps` steps; returns (losses, accuracy of each step's batch before
    the update)."""
    torch.manual_seed(seed)
    images, labels = load_mnist(data)
    model = SmallCapsNet()
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses, accuracies = [], []
    start = time.perf_counter()
    for step in range(steps):
        index = torch.randint(0, images.shape[0], (batch,))
        lengths = model(images[index])
        loss = margin_loss(lengths, labels[index])
        optimiser.zero_grad()
        loss.backward()  # through Tenet's routing backward
        optimiser.step()
        losses.append(loss.item())
        accuracies.append((lengths.argmax(1) == labels[index]).float().mean().item())
        if step % log_every == 0 or step == steps - 1:
            print(f"step {step:3d}  margin loss {loss.item():.4f}  batch accuracy "
                  f"{accuracies[-1]:.2f}  ({time.perf_counter() - start:.1f} s)")
    return losses, accuracies


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--data", default=str(ROOT / "data" / "mnist-sample"))
    args = parser.parse_args()
    main(steps=args.steps, data=args.data)
