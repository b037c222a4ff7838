"""The models of the abstraction study (bench/study.py, docs/study.md), as plain
PyTorch modules that every level runs: eager, TorchScript, torch.compile, Tenet's
import (tenet.from_torch), and, written again with LibTorch's C++ frontend,
bench/study_libtorch/ (the same layers, names and shapes).

Each module's forward takes (images, labels) and returns (scores, loss), so that a
training step is the same at every level: loss = model(x, y)[1]; backward; Adam.

- "cnn": PyTorch's MNIST example (github.com/pytorch/examples, mnist/main.py):
  two 3x3 convolutions, max pooling, dropout, two linear layers, log-softmax and
  NLL. At resolution R its first linear layer takes 64 * ((R - 4) / 2)^2 inputs.
- "resnet20": He et al. 2016's CIFAR ResNet-20 (three stages of three basic
  blocks, 16/32/64 channels, projection shortcuts), on one-channel images of any
  resolution (global average pooling before the classifier).
- "capsnet": Sabour et al. 2017's CapsNet on 28x28 images (conv 256@9x9,
  primary capsules 32x6x6 of 8D, 10 digit capsules of 16D, three routing
  iterations, the masked reconstruction decoder; margin loss + 0.0005 x the
  reconstruction error), the benchmark's definition (bench/capsnet_torch.py).

Initialisation is explicit (`initialise`), by name, so that every level starts
from the same weights and a change of scheme is the only change:
"pytorch-default" reproduces what nn.Conv2d/nn.Linear do without being asked
(weights kaiming_uniform(a=sqrt(5)), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
biases U(-1/sqrt(fan_in), 1/sqrt(fan_in)); batch norm 1 and 0; CapsNet's W
N(0, 0.01)); "xavier" is Glorot's uniform weights with zero biases.
"""
import math
from typing import Tuple

import torch
import torch.nn.functional as F
from torch import nn

import capsnet_torch
from models_torch import BasicBlock  # ResNet's basic block, projection shortcuts

MODELS = ("cnn", "resnet20", "capsnet")
RESOLUTION_MODELS = ("cnn", "resnet20")  # CapsNet's capsule grid is fixed at 28x28


class Classifier(nn.Module):
    """A classifier's forward: (scores, loss); `scores` and `loss` are the model's."""

    def forward(self, x: torch.Tensor, label: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        scores = self.scores(x)
        return scores, self.loss(scores, label)


class StudyCNN(Classifier):
    def __init__(self, resolution: int = 28):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3)
        self.conv2 = nn.Conv2d(32, 64, 3)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        side = (resolution - 4) // 2
        self.fc1 = nn.Linear(64 * side * side, 128)
        self.fc2 = nn.Linear(128, 10)

    def scores(self, x: torch.Tensor) -> torch.Tensor:
        """Log-probabilities."""
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = self.dropout1(F.max_pool2d(x, 2))
        x = self.dropout2(F.relu(self.fc1(torch.flatten(x, 1))))
        return F.log_softmax(self.fc2(x), dim=1)

    def loss(self, scores: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
        return F.nll_loss(scores, label)


class StudyResNet20(Classifier):
    def __init__(self, resolution: int = 28):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        blocks, channels = [], 16
        for out, stride in ((16, 1), (32, 2), (64, 2)):
            for i in range(3):
                blocks.append(BasicBlock(channels, out, stride if i == 0 else 1))
                channels = out
        self.layers = nn.Sequential(*blocks)
        self.fc = nn.Linear(64, 10)

    def scores(self, x: torch.Tensor) -> torch.Tensor:
        """Logits."""
        x = self.layers(F.relu(self.bn1(self.conv1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))

    def loss(self, scores: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(scores, label)


class StudyCapsNet(nn.Module):
    def __init__(self, resolution: int = 28):
        super().__init__()
        if resolution != 28:
            raise ValueError("CapsNet's capsule grid is defined for 28x28 images")
        self.conv1 = nn.Conv2d(1, 256, 9)
        self.primary = nn.Conv2d(256, 256, 9, 2)
        self.W = nn.Parameter(torch.empty(1152, 10, 16, 8))  # (capsule, class, out, in)
        self.dec1 = nn.Linear(160, 512)
        self.dec2 = nn.Linear(512, 1024)
        self.dec3 = nn.Linear(1024, 784)

    def forward(self, image: torch.Tensor,
                label: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        batch = image.shape[0]
        relu1 = F.relu(self.conv1(image))
        # channel 8 t + d of the primary convolution is dimension d of capsule map t
        u = capsnet_torch.squash(self.primary(relu1).view(batch, 32, 8, 36).transpose(2, 3)
                                 .reshape(batch, 1152, 8))
        u_hat = torch.matmul(self.W.view(1152, 160, 8), u.unsqueeze(3)).view(batch, 1152, 10, 16)
        v = capsnet_torch.routing(u_hat)
        lengths = torch.sqrt((v * v).sum(dim=2) + 1e-7)
        # one-hot labels (F.one_hot exports a run-time assertion Tenet's importer refuses)
        target = (label.unsqueeze(1) == torch.arange(10, device=label.device)).to(v.dtype)
        short, long = F.relu(0.9 - lengths), F.relu(lengths - 0.1)
        margin = (target * short * short + 0.5 * (1 - target) * long * long).sum(dim=1).mean()
        masked = (v * target.unsqueeze(2)).reshape(batch, 160)
        hidden = F.relu(self.dec2(F.relu(self.dec1(masked))))
        reconstruction = torch.sigmoid(self.dec3(hidden))
        error = ((reconstruction - image.reshape(batch, 784)) ** 2).sum(dim=1).mean()
        return lengths, margin + 0.0005 * error


class Scores(nn.Module):
    """A study model's scores alone (what Program.emit's MNIST classifier returns)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model.scores(x)


def build(name: str, resolution: int) -> nn.Module:
    return {"cnn": StudyCNN, "resnet20": StudyResNet20, "capsnet": StudyCapsNet}[name](resolution)


@torch.no_grad()
def initialise(model: nn.Module, scheme: str = "pytorch-default", seed: int = 0) -> nn.Module:
    """Every parameter and buffer set by `scheme`, in a fixed order from `seed`."""
    generator = torch.Generator().manual_seed(seed)
    for module in model.modules():
        if isinstance(module, (nn.Conv2d, nn.Linear)):
            fan_in = module.weight[0].numel()
            if scheme == "pytorch-default":
                bound = 1.0 / math.sqrt(fan_in)  # kaiming_uniform(a=sqrt(5))
            elif scheme == "xavier":
                fan_out = module.weight.shape[0] * module.weight[0, 0].numel()
                bound = math.sqrt(6.0 / (fan_in + fan_out))
            else:
                raise ValueError(f"unknown initialisation {scheme!r}")
            module.weight.uniform_(-bound, bound, generator=generator)
            if module.bias is not None:
                if scheme == "pytorch-default":
                    module.bias.uniform_(-bound, bound, generator=generator)
                else:
                    module.bias.zero_()
        elif isinstance(module, nn.BatchNorm2d):
            module.reset_parameters()
        elif isinstance(module, StudyCapsNet):
            module.W.normal_(0.0, 0.01, generator=generator)
    return model


def example_batch(name: str, batch: int, resolution: int, seed: int = 0,
                  device: str = "cpu") -> Tuple[torch.Tensor, torch.Tensor]:
    """Random images in [0, 1) and labels (timing does not need real digits)."""
    generator = torch.Generator().manual_seed(seed)
    images = torch.rand(batch, 1, resolution, resolution, generator=generator)
    labels = torch.randint(0, 10, (batch,), generator=generator)
    return images.to(device), labels.to(device)
