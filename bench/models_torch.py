"""The PyTorch models and layers of the benchmark's imported workloads (issue 17).

One definition serves both sides: bench/torch_worker.py imports each module with
tenet.from_torch (the Tenet program that tenet_bench times) and runs the very same
module, with the very same weights (written once as .npy files), in eager mode, under
torch.compile and under torch.jit.script. Every module here is written the usual
PyTorch way (nn.Conv2d, nn.BatchNorm2d, nn.Linear, F.scaled_dot_product_attention, ...)
and is TorchScript-compatible.

Whole models (`MODELS`): the training step imports the model wrapped with its loss
(`WithLoss`: the logits and the mean cross-entropy, so that the program has a scalar
loss output to differentiate); inference imports the model alone, in evaluation mode.
Layers (`LAYERS`): one small module each, imported in training mode (batch norm uses
the batch statistics).
"""
from typing import Tuple

import torch
import torch.nn.functional as F
from torch import nn


# ---- whole models ------------------------------------------------------------

class MnistCNN(nn.Module):
    """PyTorch's MNIST example network (github.com/pytorch/examples, mnist/main.py),
    with the normalisation of its data loader, as models/mnist_cnn.tn writes it. The
    forward is inference (dropout is the identity in evaluation mode); training goes
    through MnistCNNLoss, which multiplies in given dropout masks."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def log_probs(self, x: torch.Tensor, drop1: torch.Tensor,
                  drop2: torch.Tensor) -> torch.Tensor:
        x = (x - 0.1307) / 0.3081
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2) * drop1
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x)) * drop2
        return F.log_softmax(self.fc2(x), dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = (x - 0.1307) / 0.3081
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = torch.flatten(F.max_pool2d(x, 2), 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


class MnistCNNLoss(nn.Module):
    """The MNIST CNN's training forward: the dropout masks are inputs (inverted
    dropout, Bernoulli(1 - p) / (1 - p), drawn once), the loss is the NLL of the
    log-probabilities, as in models/mnist_cnn.tn."""

    def __init__(self, net: MnistCNN):
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor, label: torch.Tensor, drop1: torch.Tensor,
                drop2: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        log_probs = self.net.log_probs(x, drop1, drop2)
        return log_probs, F.nll_loss(log_probs, label)


class LeNet5(nn.Module):
    """LeCun et al. 1998 on 28x28 digits: 5x5 convolutions (the first padded to
    keep 28x28), tanh, 2x2 average pooling, 400-120-84-10 with tanh."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.avg_pool2d(torch.tanh(self.conv1(x)), 2)
        x = F.avg_pool2d(torch.tanh(self.conv2(x)), 2)
        x = torch.tanh(self.fc1(torch.flatten(x, 1)))
        x = torch.tanh(self.fc2(x))
        return self.fc3(x)


class MLP(nn.Module):
    """784-1024-1024-10 with ReLU, on flattened digits."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 1024)
        self.fc2 = nn.Linear(1024, 1024)
        self.fc3 = nn.Linear(1024, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class BasicBlock(nn.Module):
    """ResNet's basic block: two 3x3 convolutions with batch norm; a strided 1x1
    projection (with batch norm) on the shortcut where the shape changes."""

    def __init__(self, channels: int, out: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out)
        self.conv2 = nn.Conv2d(out, out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out)
        self.shortcut = nn.Sequential()
        if stride != 1 or channels != out:
            self.shortcut = nn.Sequential(nn.Conv2d(channels, out, 1, stride, bias=False),
                                          nn.BatchNorm2d(out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


class ResNet20(nn.Module):
    """He et al. 2016's CIFAR ResNet-20 (3 stages of 3 basic blocks, 16/32/64
    channels, 32x32x3 images), with projection shortcuts (option B)."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        blocks = []
        channels = 16
        for out, stride in ((16, 1), (32, 2), (64, 2)):
            for i in range(3):
                blocks.append(BasicBlock(channels, out, stride if i == 0 else 1))
                channels = out
        self.layers = nn.Sequential(*blocks)
        self.fc = nn.Linear(64, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.layers(F.relu(self.bn1(self.conv1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class ResNet18(nn.Module):
    """torchvision's ResNet-18 (7x7 stride-2 stem, 3x3 stride-2 max pooling with
    padding, 4 stages of 2 basic blocks, 64..512 channels), here on 64x64 images with
    200 classes (Tiny ImageNet's shape)."""

    def __init__(self, classes: int = 200):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        blocks = []
        channels = 64
        for out, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            for i in range(2):
                blocks.append(BasicBlock(channels, out, stride if i == 0 else 1))
                channels = out
        self.layers = nn.Sequential(*blocks)
        self.fc = nn.Linear(512, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        x = self.layers(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class SelfAttention(nn.Module):
    """Multi-head self-attention: one QKV projection, F.scaled_dot_product_attention,
    the output projection."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape[0], x.shape[1], x.shape[2]
        qkv = self.qkv(x).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class TransformerBlock(nn.Module):
    """One pre-norm transformer encoder block (as in ViT and GPT-2): x + attention
    (layer norm (x)), then x + MLP (layer norm (x)) with a 4x GELU MLP; a classifier
    on the mean over tokens."""

    def __init__(self, dim: int = 128, heads: int = 4, classes: int = 10):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = SelfAttention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))
        x = x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
        return self.head(x.mean(1))


class WithLoss(nn.Module):
    """A classifier and its loss: (logits, mean cross-entropy). What the training
    step imports, so that the program has the scalar loss to differentiate."""

    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor, label: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        logits = self.net(x)
        return logits, F.cross_entropy(logits, label)


def model(name: str, train: bool) -> nn.Module:
    """The module a whole-model workload imports and runs: the network with its loss
    for the training step (train), the network alone for inference."""
    net = MODELS[name]()
    if not train:
        return net
    return MnistCNNLoss(net) if name == "mnist_cnn" else WithLoss(net)


MODELS = {
    "mnist_cnn": MnistCNN,
    "lenet5": LeNet5,
    "mlp": MLP,
    "resnet20": ResNet20,
    "resnet18": ResNet18,
    "transformer": TransformerBlock,
}


# ---- layers --------------------------------------------------------------------

class Conv(nn.Module):
    def __init__(self, channels: int, out: int, kernel: int, stride: int, groups: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, out, kernel, stride, kernel // 2, groups=groups,
                              bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


class MaxPool(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool2d(x, 2)


class AvgPool(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.avg_pool2d(x, 2)


class BatchNorm(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)


class LayerNorm(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


class Softmax(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softmax(x, dim=-1)


class Gelu(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)


class Attention(nn.Module):
    """softmax(q k^T / sqrt(d)) v over (batch, heads, tokens, head width)."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v)


class LinearReLU(nn.Module):
    def __init__(self, features: int, out: int):
        super().__init__()
        self.fc = nn.Linear(features, out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.fc(x))


# name -> (module factory, training mode)
LAYERS = {
    "conv3x3": (lambda: Conv(64, 64, 3, 1, 1), True),
    "conv3x3_s2": (lambda: Conv(64, 128, 3, 2, 1), True),
    "conv1x1": (lambda: Conv(64, 256, 1, 1, 1), True),
    "conv_dw3x3": (lambda: Conv(128, 128, 3, 1, 128), True),
    "maxpool": (MaxPool, True),
    "avgpool": (AvgPool, True),
    "batchnorm": (lambda: BatchNorm(64), True),
    "layernorm": (lambda: LayerNorm(512), True),
    "softmax": (Softmax, True),
    "gelu": (Gelu, True),
    "attention": (Attention, True),
    "linear_relu": (lambda: LinearReLU(1024, 1024), True),
}


def layer(name: str) -> nn.Module:
    return LAYERS[name][0]()
