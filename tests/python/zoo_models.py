"""Small modules made of the ops real models (torchvision's and Hugging Face's) use and
the importer once refused: pooling with ceil_mode, count_include_pad=False and adaptive
windows that do not divide; Bernoulli draws (in-place dropout, stochastic depth);
slice/select scatters and as_strided; scaled_dot_product_attention with masks, dropout
and grouped queries; embeddings with padding_idx; integer min/max; empty constants."""

import torch
import torch.nn.functional as F
from torch import nn


class Pools(nn.Module):
    """GoogLeNet's and SqueezeNet's ceil-mode pools, Inception's and PyTorch's
    count_include_pad=False, AlexNet's and VGG's adaptive pools at small inputs."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        a = F.max_pool2d(y, 3, 2, ceil_mode=True)
        b = F.avg_pool2d(y, 3, 2, 1, ceil_mode=True, count_include_pad=False)
        c = F.avg_pool2d(y, 3, 2, ceil_mode=True)
        d = F.avg_pool2d(y, 3, 1, 1, count_include_pad=False)
        e = F.adaptive_avg_pool2d(y, (3, 4))
        f = F.adaptive_avg_pool2d(a, (5, 6))  # larger than its input
        return (a.sum() + b.square().sum() + c.mean() + d.square().mean() + e.square().sum()
                + f.pow(3).sum())


class Draws(nn.Module):
    """Dropout written in place (MobileNetV3, MnasNet: empty + bernoulli_ in the graph)
    and torchvision's stochastic depth (EfficientNet, ConvNeXt)."""

    def __init__(self):
        super().__init__()
        from torchvision.ops import StochasticDepth
        self.fc = nn.Linear(6, 6)
        self.drop = nn.Dropout(0.3, inplace=True)
        self.depth = StochasticDepth(0.4, "row")

    def forward(self, x):
        return (self.depth(self.drop(self.fc(x))) + x).square().sum()


class Scatters(nn.Module):
    """In-place writes into slices (Swin's attention mask) and as_strided views."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(4))

    def forward(self, x, z):
        y = x * self.scale
        y[:, 1:5:2] = (z * 3).unsqueeze(1)
        y[:, 0] = z * self.scale + 1
        y[:, -1:] = 0.5
        m = x.mean((-1,), keepdim=True)
        same = m.as_strided(m.shape, (m.shape[1], 1, 1))
        strided = (x * 2).as_strided((2, 3), (2, 1), 1)
        return y.square().sum() + same.sum() * strided.sum()


class Attentions(nn.Module):
    """scaled_dot_product_attention as transformers call it: boolean and additive masks
    (one query row fully masked), causal, dropout in training, grouped-query heads."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(8, 24)

    def forward(self, x, allowed):
        b, n, _ = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, 4, 2).permute(2, 0, 3, 1, 4)
        one = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
        two = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed.float() * -2.0,
                                             scale=0.7)
        three = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.2)
        four = F.scaled_dot_product_attention(q, k[:, :2], v[:, :2], enable_gqa=True)
        return (one * two).sum() + three.square().sum() + four.pow(3).sum()


class Lookups(nn.Module):
    """BERT's padded embedding (row 0 gets no gradient), an integer minimum used as an
    index (T5's relative positions) and an empty constant in a cat (GPT-2's cache)."""

    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(10, 4, padding_idx=0)
        self.table = nn.Parameter(torch.randn(6, 4))

    def forward(self, tokens):
        near = torch.minimum(tokens, torch.full_like(tokens, 5))
        far = torch.maximum(tokens - 4, torch.zeros_like(tokens))
        rows = self.embedding(tokens) + self.table[near] * self.table[far]
        return torch.cat([torch.tensor([]), rows.flatten()], 0).square().sum()


class Resampling(nn.Module):
    """Bilinear interpolation (segmentation heads, FPNs: with and without align_corners,
    up and down) and division with a rounding mode."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 1)

    def forward(self, x, n):
        y = self.conv(x)
        up = F.interpolate(y, scale_factor=2, mode="bilinear")
        corners = F.interpolate(y, size=(5, 7), mode="bilinear", align_corners=True)
        down = F.interpolate(y, size=(2, 3), mode="bilinear")
        steps = torch.div(y, 0.3, rounding_mode="trunc")
        counts = torch.div(n, 3, rounding_mode="floor") + torch.div(n, -4, rounding_mode="trunc")
        return (up.square().sum() + corners.pow(3).sum() + down.sum() * steps.sum()
                + counts.sum())
