"""The CapsNet of models/capsnet.tn in PyTorch, with identical math, and its
operators on their own (the per-operator benchmark), plus the MNIST CNN of
models/mnist_cnn.tn (PyTorch's MNIST example) and the LLTM cell of PyTorch's
C++ extension tutorial.

Written the way public PyTorch CapsNet code is written: convolutions with
F.conv2d, the capsule transform as one broadcast torch.matmul of the 16x8
matrices with the 8-D capsules, routing sums as element-wise products
followed by .sum(). Every function here is TorchScript-compatible, so the same
code runs eagerly, under torch.compile and under torch.jit.script.

Parameters have exactly the shapes of capsnet.tn's inputs (so the same .npy
files load into both): conv1_w (256, 1, 9, 9), conv1_b (256), primary_w
(256, 256, 9, 9), primary_b (256), W (32, 6, 6, 10, 16, 8) [W(t, y, x, k, e, d)],
dec1_w (512, 10, 16), dec1_b (512), dec2_w (1024, 512), dec2_b (1024),
dec3_w (28, 28, 1024), dec3_b (28, 28).
"""
from typing import List, Tuple

import torch
import torch.nn.functional as F
from torch import nn

from workloads import CNN_PARAMETER_SHAPES, PARAMETER_SHAPES


def conv1_relu(image: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """9x9 convolution 1 -> 256 channels, ReLU: (B, 256, 20, 20)."""
    return F.relu(F.conv2d(image, w, bias))


def primary_caps(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """9x9 stride-2 convolution to 256 = 32 x 8 channels, channel 8*t + d read
    as dimension d of capsule map t: (B, 32, 6, 6, 8) (a view, no copy)."""
    conv = F.conv2d(x, w, bias, stride=2)
    return conv.view(x.shape[0], 32, 8, conv.shape[2], conv.shape[3]).permute(0, 1, 3, 4, 2)


def squash(s: torch.Tensor) -> torch.Tensor:
    """Shrinks each capsule (the last dimension) to a length below 1."""
    n2 = (s * s).sum(dim=-1, keepdim=True)
    return s * torch.sqrt(n2 + 1e-7) / (1 + n2)


def capsule_transform(u: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """u_hat(b, i, k, e) = sum_d W(i, k, e, d) u(b, i, d) for the 1152 primary
    capsules i = (t, y, x): (B, 1152, 10, 16)."""
    batch, capsules = u.shape[0], W.shape[0] * W.shape[1] * W.shape[2]
    classes, out_dim, in_dim = W.shape[3], W.shape[4], W.shape[5]
    w = W.reshape(capsules, classes * out_dim, in_dim)
    u_hat = torch.matmul(w, u.reshape(batch, capsules, in_dim, 1))
    return u_hat.view(batch, capsules, classes, out_dim)


def weighted_sum(c: torch.Tensor, u_hat: torch.Tensor) -> torch.Tensor:
    """s(b, k, e) = sum_i c(b, i, k) u_hat(b, i, k, e): (B, 10, 16)."""
    return (c.unsqueeze(3) * u_hat).sum(dim=1)


def agreement_update(logits: torch.Tensor, u_hat: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """logits(b, i, k) + sum_e u_hat(b, i, k, e) v(b, k, e)."""
    return logits + (u_hat * v.unsqueeze(1)).sum(dim=3)


def routing(u_hat: torch.Tensor) -> torch.Tensor:
    """Three routing iterations from zero logits; softmax over the digit
    capsules k for each primary capsule. (The logit update after the last
    iteration, which capsnet.tn writes and Tenet removes as dead, is skipped.)"""
    logits = torch.zeros(u_hat.shape[0], u_hat.shape[1], u_hat.shape[2], dtype=u_hat.dtype)
    v = squash(weighted_sum(F.softmax(logits, dim=2), u_hat))
    for _ in range(2):
        logits = agreement_update(logits, u_hat, v)
        v = squash(weighted_sum(F.softmax(logits, dim=2), u_hat))
    return v


def masked_decoder(v: torch.Tensor, label: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor,
                   w2: torch.Tensor, b2: torch.Tensor, w3: torch.Tensor,
                   b3: torch.Tensor) -> torch.Tensor:
    """The digit capsules masked by the one-hot label, 160 -> 512 -> 1024 ->
    784 (ReLU, ReLU, sigmoid), as a (B, 28, 28) image."""
    batch = v.shape[0]
    target = F.one_hot(label.long(), v.shape[1]).to(v.dtype)
    masked = (v * target.unsqueeze(2)).reshape(batch, -1)
    h1 = F.relu(F.linear(masked, w1.reshape(w1.shape[0], -1), b1))
    h2 = F.relu(F.linear(h1, w2, b2))
    h3 = F.linear(h2, w3.reshape(-1, w3.shape[2]), b3.reshape(-1))
    return torch.sigmoid(h3).view(batch, w3.shape[0], w3.shape[1])


def capsnet_forward(image: torch.Tensor, label: torch.Tensor,
                     params: List[torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(lengths, reconstruction, loss), params in PARAMETER_SHAPES order."""
    batch = image.shape[0]
    relu1 = conv1_relu(image, params[0], params[1])
    u = squash(primary_caps(relu1, params[2], params[3]))
    v = routing(capsule_transform(u, params[4]))
    lengths = torch.sqrt((v * v).sum(dim=2) + 1e-7)

    target = F.one_hot(label.long(), v.shape[1]).to(v.dtype)
    short = F.relu(0.9 - lengths)
    long = F.relu(lengths - 0.1)
    margin = (target * short * short + 0.5 * (1 - target) * long * long).sum(dim=1)
    margin_loss = margin.sum() / batch

    reconstruction = masked_decoder(v, label, params[5], params[6], params[7], params[8],
                                    params[9], params[10])
    err = reconstruction - image[:, 0]
    recon_loss = (0.0005 * (err * err).sum(dim=[1, 2])).sum() / batch
    return lengths, reconstruction, margin_loss + recon_loss


class CapsNet(nn.Module):
    """capsnet.tn's `capsnet` as a module; its parameters are named as there."""

    def __init__(self, initial: dict):
        super().__init__()
        for name, _ in PARAMETER_SHAPES:
            self.register_parameter(name, nn.Parameter(torch.as_tensor(initial[name]).clone()))

    def forward(self, image: torch.Tensor,
                label: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return capsnet_forward(image, label, [
            self.conv1_w, self.conv1_b, self.primary_w, self.primary_b, self.W, self.dec1_w,
            self.dec1_b, self.dec2_w, self.dec2_b, self.dec3_w, self.dec3_b])


def mnist_cnn_forward(image: torch.Tensor, label: torch.Tensor, drop1: torch.Tensor,
                      drop2: torch.Tensor,
                      params: List[torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor]:
    """(log_probs, loss) of PyTorch's MNIST example (github.com/pytorch/examples,
    mnist/main.py) with its dropout masks given, params in CNN_PARAMETER_SHAPES
    order (fc1_w is [128, 64, 12, 12]: nn.Linear(9216, 128)'s weight, unflattened)."""
    x = (image - 0.1307) / 0.3081
    x = F.relu(F.conv2d(x, params[0], params[1]))
    x = F.relu(F.conv2d(x, params[2], params[3]))
    x = F.max_pool2d(x, 2) * drop1
    x = torch.flatten(x, 1)
    x = F.relu(F.linear(x, params[4].reshape(params[4].shape[0], -1), params[5])) * drop2
    log_probs = F.log_softmax(F.linear(x, params[6], params[7]), dim=1)
    return log_probs, F.nll_loss(log_probs, label.long())


class MnistCnn(nn.Module):
    """mnist_cnn.tn's `mnist_cnn` as a module; its parameters are named as there."""

    def __init__(self, initial: dict):
        super().__init__()
        for name, _ in CNN_PARAMETER_SHAPES:
            self.register_parameter(name, nn.Parameter(torch.as_tensor(initial[name]).clone()))

    def forward(self, image: torch.Tensor, label: torch.Tensor, drop1: torch.Tensor,
                drop2: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        return mnist_cnn_forward(image, label, drop1, drop2, [
            self.conv1_w, self.conv1_b, self.conv2_w, self.conv2_b, self.fc1_w, self.fc1_b,
            self.fc2_w, self.fc2_b])


# The whole models: (module class, parameter shapes, output names; the loss is last).
MODELS = {
    "capsnet": (CapsNet, PARAMETER_SHAPES, ["lengths", "reconstruction", "loss"]),
    "mnist_cnn": (MnistCnn, CNN_PARAMETER_SHAPES, ["log_probs", "loss"]),
}


# ---- the operators on their own, with capsnet.tn's shapes -------------------

def op_primary_caps(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return primary_caps(x, w, bias)


def op_squash(s: torch.Tensor) -> torch.Tensor:
    return squash(s)


def op_u_calc(u: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """u (B, 32, 6, 6, 8), W (32, 6, 6, 10, 16, 8) -> uh (B, 32, 6, 6, 10, 16)."""
    return capsule_transform(u, W).view(u.shape[0], W.shape[0], W.shape[1], W.shape[2],
                                        W.shape[3], W.shape[4])


def op_s_calc(c: torch.Tensor, uh: torch.Tensor) -> torch.Tensor:
    """c (B, 32, 6, 6, 10), uh (B, 32, 6, 6, 10, 16) -> s (B, 10, 16)."""
    batch = c.shape[0]
    return weighted_sum(c.reshape(batch, -1, c.shape[4]),
                        uh.reshape(batch, -1, uh.shape[4], uh.shape[5]))


def op_b_calc(uh: torch.Tensor, v: torch.Tensor, logit: torch.Tensor) -> torch.Tensor:
    """uh (B, 32, 6, 6, 10, 16), v (B, 10, 16), logit (B, 32, 6, 6, 10)."""
    batch = uh.shape[0]
    new = agreement_update(logit.reshape(batch, -1, logit.shape[4]),
                           uh.reshape(batch, -1, uh.shape[4], uh.shape[5]), v)
    return new.view(logit.shape)


def op_softmax(z: torch.Tensor) -> torch.Tensor:
    return F.softmax(z, dim=-1)


def lltm(x: torch.Tensor, h: torch.Tensor, cell: torch.Tensor, w: torch.Tensor,
         bias: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """LLTM.forward of the C++ extension tutorial (the Python version)."""
    X = torch.cat([h, x], dim=1)
    gates = F.linear(X, w, bias).chunk(3, dim=1)
    input_gate = torch.sigmoid(gates[0])
    output_gate = torch.sigmoid(gates[1])
    candidate = F.elu(gates[2])
    new_c = cell + candidate * input_gate
    new_h = torch.tanh(new_c) * output_gate
    return new_h, new_c


def embedding_bag(W: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """F.embedding_bag in mode "sum" over fixed-length bags (dense gradient)."""
    return F.embedding_bag(tokens.long(), W, mode="sum")


OPERATORS = {
    "conv1_relu": conv1_relu,
    "primary_caps": op_primary_caps,
    "squash": op_squash,
    "u_calc": op_u_calc,
    "s_calc": op_s_calc,
    "b_calc": op_b_calc,
    "softmax": op_softmax,
    "masked_decoder": masked_decoder,
    "lltm": lltm,
    "embedding_bag": embedding_bag,
}
