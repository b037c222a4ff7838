"""Checks Tenet's training models against PyTorch: the same parameters (read
from a checkpoint of `tenet train`, as PyTorch reads it) and the same batch
give the same loss and the same gradients.

Not part of CI (CI has no PyTorch); run it with the project's environment
(scripts/venv.sh) after training a model for a few steps:

    build/tools/tenet train models/mnist_cnn.tn --epochs 1 --limit-train 200 --out /tmp/cnn
    .venv/bin/python tests/training/pytorch_check.py mnist_cnn /tmp/cnn/last.safetensors

It writes the batch and the parameters as .npy files, runs the model's
training function and its gradient with `tenet run --grad --backend cpp`,
computes the same in PyTorch (float64, written independently from the
paper or the PyTorch example, not from the .tn file), and prints, per
output and gradient, the largest difference relative to the largest PyTorch
value. It exits non-zero if any exceeds 1e-4 (float32 against float64).
Dropout masks are ones (the functions are compared, not the random draws).
"""

import argparse
import gzip
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOLERANCE = 1e-4


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def test_batch(batch):
    sample = os.path.join(ROOT, "data", "mnist-sample")
    images = read_idx(os.path.join(sample, "t10k-images-idx3-ubyte.gz"))[:batch]
    labels = read_idx(os.path.join(sample, "t10k-labels-idx1-ubyte.gz"))[:batch]
    return (images.astype(np.float32) / 255.0).reshape(batch, 1, 28, 28), labels.astype(np.int32)


def mlp(p, image, label, masks):
    h = F.relu(image.reshape(len(image), 784) @ p["fc1_w"].reshape(256, 784).T + p["fc1_b"])
    log_probs = F.log_softmax(h @ p["fc2_w"].T + p["fc2_b"], dim=1)
    return {"log_probs": log_probs, "loss": F.nll_loss(log_probs, label)}


def mnist_cnn(p, image, label, masks):
    # github.com/pytorch/examples mnist/main.py, with the dropout masks given.
    x = (image - 0.1307) / 0.3081  # transforms.Normalize((0.1307,), (0.3081,))
    x = F.relu(F.conv2d(x, p["conv1_w"], p["conv1_b"]))
    x = F.relu(F.conv2d(x, p["conv2_w"], p["conv2_b"]))
    x = F.max_pool2d(x, 2) * masks["drop1"]
    x = torch.flatten(x, 1)
    x = F.relu(x @ p["fc1_w"].reshape(128, 9216).T + p["fc1_b"]) * masks["drop2"]
    log_probs = F.log_softmax(x @ p["fc2_w"].T + p["fc2_b"], dim=1)
    return {"log_probs": log_probs, "loss": F.nll_loss(log_probs, label)}


def squash(s, dim):
    n2 = (s * s).sum(dim, keepdim=True)
    return s * torch.sqrt(n2 + 1e-7) / (1 + n2)


def capsnet(p, image, label, masks):
    # Sabour, Frosst and Hinton (2017): conv1, primary capsules, routing by
    # agreement (softmax over the 10 digit capsules), margin loss, decoder
    # masked by the label, reconstruction loss 0.0005 x sum of squares.
    b = len(image)
    x = F.relu(F.conv2d(image, p["conv1_w"], p["conv1_b"]))
    x = F.conv2d(x, p["primary_w"], p["primary_b"], stride=2)          # [B, 256, 6, 6]
    u = squash(x.reshape(b, 32, 8, 6, 6).permute(0, 1, 3, 4, 2), -1)   # [B, 32, 6, 6, 8]
    uh = torch.einsum("tyxked,btyxd->btyxke", p["W"], u)               # [B, 32, 6, 6, 10, 16]
    logits = torch.zeros(b, 32, 6, 6, 10, dtype=uh.dtype)
    for _ in range(3):
        c = torch.softmax(logits, dim=-1)
        v = squash(torch.einsum("btyxk,btyxke->bke", c, uh), -1)
        logits = logits + torch.einsum("btyxke,bke->btyxk", uh, v)
    lengths = torch.sqrt((v * v).sum(-1) + 1e-7)
    target = F.one_hot(label.long(), 10).to(uh.dtype)
    margin = (target * F.relu(0.9 - lengths) ** 2 +
              0.5 * (1 - target) * F.relu(lengths - 0.1) ** 2).sum(1).mean()
    h = F.relu(torch.einsum("bke,oke->bo", v * target[:, :, None], p["dec1_w"]) + p["dec1_b"])
    h = F.relu(h @ p["dec2_w"].T + p["dec2_b"])
    reconstruction = torch.sigmoid(torch.einsum("bi,yxi->byx", h, p["dec3_w"]) + p["dec3_b"])
    recon = 0.0005 * ((reconstruction - image[:, 0]) ** 2).sum((1, 2)).mean()
    return {"lengths": lengths, "reconstruction": reconstruction, "loss": margin + recon}


MODELS = {
    "mlp": (mlp, "models/mlp.tn", "mlp", []),
    "mnist_cnn": (mnist_cnn, "models/mnist_cnn.tn", "mnist_cnn",
                  [("drop1", (64, 12, 12)), ("drop2", (128,))]),
    "capsnet": (capsnet, "models/capsnet.tn", "capsnet", []),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", choices=sorted(MODELS))
    parser.add_argument("checkpoint")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--tenet", default=os.path.join(ROOT, "build", "tools", "tenet"))
    args = parser.parse_args()
    forward, path, fn, mask_shapes = MODELS[args.model]

    params = {k: v for k, v in load_file(args.checkpoint).items() if "/" not in k}
    image, label = test_batch(args.batch)
    masks = {name: np.ones((args.batch,) + shape, np.float32) for name, shape in mask_shapes}
    with tempfile.TemporaryDirectory() as tmp:
        inputs, outputs = os.path.join(tmp, "in"), os.path.join(tmp, "out")
        os.makedirs(inputs)
        for name, value in [("image", image), ("label", label)] + list(masks.items()):
            np.save(os.path.join(inputs, name + ".npy"), value)
        for name, value in params.items():
            np.save(os.path.join(inputs, name + ".npy"), value.numpy())
        subprocess.run([args.tenet, "run", path, "--fn", fn, "--grad", "--output", "loss",
                        "--wrt", ",".join(params), "--inputs", inputs, "--save", outputs,
                        "--backend", "cpp"], check=True, stdout=subprocess.DEVNULL)
        tenet = {f[:-4]: np.load(os.path.join(outputs, f)) for f in os.listdir(outputs)}

    torch_params = {k: v.double().requires_grad_() for k, v in params.items()}
    result = forward(torch_params, torch.from_numpy(image).double(),
                     torch.from_numpy(label).long(),
                     {k: torch.from_numpy(v).double() for k, v in masks.items()})
    result["loss"].backward()
    reference = {k: v.detach().numpy() for k, v in result.items()}
    reference.update({"d_" + k: v.grad.numpy() for k, v in torch_params.items()})

    worst = 0.0
    print(f"{args.model}, batch {args.batch}: Tenet (float32) against PyTorch (float64)")
    for name, want in reference.items():
        got = tenet[name].reshape(want.shape)
        error = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
        worst = max(worst, error)
        print(f"  {name:16s} max|ref| {np.abs(want).max():10.3g}  max err / max|ref| {error:.2e}")
    print("ok" if worst <= TOLERANCE else "FAILED")
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
