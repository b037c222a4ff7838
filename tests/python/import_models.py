"""Models for the importer tests (tests/python/test_import_*.py), small sizes, and the
check that runs one through tenet.from_torch against PyTorch."""

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

import tenet


class MLP(nn.Module):
    def __init__(self, features=6, hidden=8, classes=3):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x, label):
        h = F.relu(self.fc1(x))
        log_probs = F.log_softmax(self.fc2(h), dim=1)
        return F.nll_loss(log_probs, label)


class MnistCNN(nn.Module):
    """PyTorch's MNIST example network (github.com/pytorch/examples, mnist/main.py)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.avg_pool2d(torch.tanh(self.conv1(x)), 2)
        x = F.avg_pool2d(torch.sigmoid(self.conv2(x)), 2)
        x = torch.tanh(self.fc1(x.flatten(1)))
        x = torch.tanh(self.fc2(x))
        return self.fc3(x)


class LLTM(nn.Module):
    """The LLTM cell of PyTorch's C++ extension tutorial, in plain PyTorch."""

    def __init__(self, input_features=5, state_size=4):
        super().__init__()
        self.weights = nn.Parameter(torch.randn(3 * state_size, input_features + state_size) * 0.3)
        self.bias = nn.Parameter(torch.randn(3 * state_size) * 0.3)

    def forward(self, x, h, c):
        X = torch.cat([h, x], dim=1)
        gate_weights = F.linear(X, self.weights, self.bias)
        gates = gate_weights.chunk(3, dim=1)
        input_gate = torch.sigmoid(gates[0])
        output_gate = torch.sigmoid(gates[1])
        candidate_cell = F.elu(gates[2])
        new_c = c + candidate_cell * input_gate
        new_h = torch.tanh(new_c) * output_gate
        return new_h, new_c


class EmbeddingBagModel(nn.Module):
    def __init__(self, vocabulary=12, dim=4, classes=3):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocabulary, dim, mode="mean")
        self.embedding = nn.Embedding(vocabulary, dim)
        self.fc = nn.Linear(dim, classes)

    def forward(self, tokens):
        return self.fc(self.bag(tokens) + self.embedding(tokens).sum(1))


class ConvBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 4, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 4, 3, stride=2, padding=1, groups=2)
        self.bn2 = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.bn2(F.relu(self.conv2(x))) + F.avg_pool2d(x, 2)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


def relative(a, b):
    """max |a - b| relative to the largest |b| (0 when both are 0)."""
    scale = b.abs().max().item()
    return (a - b).abs().max().item() / (scale if scale else 1.0)


def _as_loss(outputs, weights):
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    if not weights:
        weights.extend(torch.randn(o.shape, dtype=o.dtype) if o.dim() else None for o in outputs)
    return sum(o if w is None else (o * w).sum() for o, w in zip(outputs, weights))


def check(model, args, *, dtype=torch.float64, steps=3, lr=0.05, tolerance=None,
          training=True, seed=0, target=None):
    """Runs ``model`` in PyTorch and through tenet.from_torch(...).module(target) side by side:
    forward outputs, every parameter gradient and the buffers after one step, then
    parameters after ``steps`` SGD steps. Returns {what: relative difference}; asserts
    each is within ``tolerance`` (1e-9 in float64, 1e-4 in float32)."""
    tolerance = tolerance or (1e-9 if dtype == torch.float64 else 1e-4)
    args = tuple(a.to(dtype) if a.is_floating_point() else a for a in args)
    reference = copy.deepcopy(model).to(dtype).train(training)
    imported = copy.deepcopy(model).to(dtype).train(training)
    program = tenet.from_torch(imported, args)
    module = program.module(target)
    ours = torch.optim.SGD(module.parameters(), lr=lr)
    theirs = torch.optim.SGD(reference.parameters(), lr=lr)
    found = {}
    weights = []
    for step in range(steps):
        torch.manual_seed(seed + step)
        expected = reference(*args)
        torch.manual_seed(seed + step)
        got = module(*args)
        if step == 0:
            pairs = zip(got if isinstance(got, tuple) else (got,),
                        expected if isinstance(expected, tuple) else (expected,))
            for k, (a, b) in enumerate(pairs):
                found[f"output {k}"] = relative(a.detach(), b.detach())
        ours.zero_grad()
        theirs.zero_grad()
        _as_loss(got, weights).backward()
        _as_loss(expected, weights).backward()
        if step == 0:
            mine = dict(module.named_parameters())
            for key, p in reference.named_parameters():
                found[f"grad {key}"] = relative(mine[key].grad, p.grad)
        ours.step()
        theirs.step()
        if step == 0:
            mine = dict(module.named_buffers())
            for key, b in reference.named_buffers():
                found[f"buffer {key}"] = (relative(mine[key], b) if b.is_floating_point()
                                          else float((mine[key] != b).any()))
    mine = dict(module.named_parameters())
    for key, p in reference.named_parameters():
        found[f"after {steps} steps: {key}"] = relative(mine[key].detach(), p.detach())
    worst = max(found.items(), key=lambda kv: kv[1])
    print(f"{type(model).__name__} ({dtype}, {'train' if training else 'eval'}): "
          f"largest difference {worst[1]:.2e} ({worst[0]})")
    assert worst[1] <= tolerance, found
    return program, found


class TinyTransformer(nn.Module):
    """One encoder block: multi-head self-attention (softmax of scaled Q K^T), layer
    norms, a GELU/SiLU feed-forward; cross-entropy of a mean-pooled readout."""

    def __init__(self, dim=8, heads=2, hidden=12, classes=3):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.ff1 = nn.Linear(dim, hidden)
        self.ff2 = nn.Linear(hidden, dim)
        self.out = nn.Linear(dim, classes)

    def forward(self, x, label):
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q = q.reshape(b, n, self.heads, d // self.heads).transpose(1, 2)
        k = k.reshape(b, n, self.heads, d // self.heads).transpose(1, 2)
        v = v.reshape(b, n, self.heads, d // self.heads).transpose(1, 2)
        attention = torch.softmax(q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5, dim=-1)
        mixed = (attention @ v).transpose(1, 2).reshape(b, n, d)
        x = x + self.proj(mixed)
        x = x + self.ff2(F.silu(F.gelu(self.ff1(self.norm2(x)))))
        return F.cross_entropy(self.out(x.mean(1)), label)


class RecurrentCells(nn.Module):
    """A GRU cell and an LSTM cell unrolled over a few steps; MSE and BCE-with-logits."""

    def __init__(self, features=3, hidden=4, steps=3):
        super().__init__()
        self.steps = steps
        self.gru = nn.GRUCell(features, hidden)
        self.lstm = nn.LSTMCell(hidden, hidden)
        self.readout = nn.Linear(hidden, 1)

    def forward(self, sequence, target):
        h = torch.zeros(sequence.shape[0], self.gru.hidden_size, dtype=sequence.dtype)
        state = (h, h)
        for t in range(self.steps):
            h = self.gru(sequence[:, t], h)
            state = self.lstm(h, state)
        score = self.readout(state[0]).squeeze(1)
        return (F.mse_loss(score, target)
                + F.binary_cross_entropy_with_logits(score, target.sigmoid()))


class BinarisedMLP(nn.Module):
    """Sign activations with a straight-through estimator: h + (sign(h) - h).detach()."""

    def __init__(self, features=6, hidden=8, classes=3):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x, label):
        h = self.fc1(x)
        h = h + (torch.sign(h) - h).detach()
        return F.cross_entropy(self.fc2(h), label)


class BasicBlock(nn.Module):
    def __init__(self, channels, out, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out)
        self.conv2 = nn.Conv2d(out, out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out)
        self.shortcut = nn.Sequential()
        if stride != 1 or channels != out:
            self.shortcut = nn.Sequential(nn.Conv2d(channels, out, 1, stride, bias=False),
                                          nn.BatchNorm2d(out))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


class TinyResNet(nn.Module):
    """ResNet-18's structure at toy sizes: a 3x3 stem, 3x3 max pooling with padding 1,
    two basic blocks (one strided with a 1x1 projection), adaptive average pooling."""

    def __init__(self, classes=3):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = BasicBlock(4, 4, 1)
        self.layer2 = BasicBlock(4, 8, 2)
        self.fc = nn.Linear(8, classes)

    def forward(self, x):
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, (1, 1)), 1))


class OffsetBags(nn.Module):
    """nn.EmbeddingBag with explicit offsets (bags of different lengths), summed; and
    with a padding index, left out of sums and of a mean's count, in fixed-size and
    ragged bags (a bag of padding only is 0)."""

    def __init__(self, vocabulary=10, dim=3):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocabulary, dim, mode="sum")
        self.padded_mean = nn.EmbeddingBag(vocabulary, dim, mode="mean", padding_idx=2)
        self.padded_sum = nn.EmbeddingBag(vocabulary, dim, mode="sum", padding_idx=2)
        with torch.no_grad():  # the padding row as a trained one: not zero
            self.padded_mean.weight[2] = 5.0
            self.padded_sum.weight[2] = 5.0

    def forward(self, tokens, offsets):
        rows = tokens[:6].reshape(2, 3)
        fixed = self.padded_mean(rows) + self.padded_sum(rows)
        ragged = self.padded_mean(tokens, offsets) + self.padded_sum(tokens, offsets)
        return self.bag(tokens, offsets) + ragged + fixed.sum(0)


class Attention(nn.Module):
    """PyTorch's fused attention (scaled_dot_product_attention, causal) over a depthwise
    1-D convolution of the sequence."""

    def __init__(self, dim=4, classes=3):
        super().__init__()
        self.depthwise = nn.Conv1d(dim, dim, 3, padding=1, groups=dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, classes)

    def forward(self, x, label):
        x = self.depthwise(x.transpose(1, 2)).transpose(1, 2)
        q, k, v = self.qkv(x).unsqueeze(1).chunk(3, dim=-1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).squeeze(1)
        return F.cross_entropy(self.out(y).mean(1), label)


class RecurrentLayers(nn.Module):
    """nn.LSTM and nn.GRU layers over a sequence (export unrolls them into cells)."""

    def __init__(self, features=3, hidden=4, outputs=2):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, batch_first=True)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, outputs)

    def forward(self, x):
        y, _ = self.lstm(x)
        z, _ = self.gru(y)
        return self.fc(z[:, -1])


class Lookups(nn.Module):
    """Rows of a parameter picked by an integer tensor: x[idx] and index_select."""

    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(7, 3))
        self.fc = nn.Linear(3, 2)

    def forward(self, x, rows):
        picked = self.table[rows] + torch.index_select(self.table, 0, rows)
        return self.fc(picked * x[:, rows[:2]].sum(1, keepdim=True))


class PairIndexing(nn.Module):
    """Several index tensors at once, broadcast together: adjacent (``t[i, j]``, the
    result where the indexed dimensions were), separated by a slice (``t[i, :, j]``,
    the broadcast dimensions first) and after a slice (``x[:, i, j]``); negative indices."""

    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(5, 6, 6))

    def forward(self, x, i, j):
        a = self.table[i[:, None], j]            # [3, 2, 6]: i (3, 1) and j (2,) broadcast
        b = self.table[i[:, None], :, j - 6]     # [3, 2, 6]: a slice between: S first
        c = x[:, i[:2], j]                       # [B, 2]: after a slice
        return a.sum(2).sum(1) + b.mean(2).sum(1) + c.sum(0).repeat(2)[:3]


class RunningSums(nn.Module):
    """cumsum along the last and the first dimension, a cumprod through a zero (its
    gradient exact there), and position ids from a mask (``mask.cumsum(1) - 1``, as
    Hugging Face models compute them: an int64 scan)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 5)
        self.pos = nn.Embedding(6, 5, max_norm=1.0)  # the rows used are renormalised

    def forward(self, x, mask):
        h = self.fc(x)
        gate = torch.where(h > 0.8, torch.zeros_like(h), h)  # some zeros
        positions = (mask.cumsum(1) - 1).clamp(min=0)
        return (h.cumsum(1) + 0.5 * h.cumsum(0) + gate.cumprod(1)
                + self.pos(positions).sum(1, keepdim=True))


class Picks(nn.Module):
    """Sorting and picking: top-k scores, a sort's values and indices, argmax; scatters
    into a copy (index_put with and without accumulate, a negative index); an embedding
    whose rows are renormalised to an L1 norm of at most 0.5."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 6)
        self.codes = nn.Embedding(7, 6, max_norm=0.5, norm_type=1.0)

    def forward(self, x, rows):
        h = self.fc(x)
        top = torch.topk(h, 3, 1).values
        ordered, order = torch.sort(h, 0, descending=True)
        best = h.argmax(1)
        added = h.index_put((rows,), top.sum(1, keepdim=True) * 0.5, accumulate=True)
        put = h.clone()
        put[rows[:2] - 3] = ordered[:2]
        return (top.sum(1) + ordered[order.float().argmin(0)].sum(1)[:3].sum()
                + best.float() + added.sum(1) + put.sum(1) + self.codes(rows).sum(1))


class GroupNormActivations(nn.Module):
    """GroupNorm, var, normalize and the activations export writes out in primitives
    (softplus, logsigmoid, hardswish, mish, hardsigmoid)."""

    def __init__(self):
        super().__init__()
        self.norm = nn.GroupNorm(2, 4)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        y = (F.softplus(x) + F.logsigmoid(x) + F.hardswish(x) + F.mish(x) + F.hardsigmoid(x)
             + self.norm(x) + x.var(1, keepdim=True) + F.normalize(x, dim=1))
        return self.fc(y.mean((2, 3)))


class Upsampler(nn.Module):
    """Transposed convolutions: stride 2 with output padding, a dilated one, and grouped
    ones (one input channel and two outputs per group; two inputs and one output)."""

    def __init__(self):
        super().__init__()
        self.up1 = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1)
        self.up2 = nn.ConvTranspose2d(3, 2, 2, stride=1, padding=0, dilation=2)
        self.up3 = nn.ConvTranspose2d(2, 4, 3, stride=2, padding=1, groups=2)
        self.up4 = nn.ConvTranspose2d(4, 2, 2, groups=2, bias=False)

    def forward(self, x):
        return (self.up2(torch.tanh(self.up1(x))).square().mean()
                + self.up4(torch.tanh(self.up3(x))).square().mean())


class ShapeOps(nn.Module):
    """Padding, flips, rolls, repeats, stacks and nearest upsampling before a convolution."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 2, 3)

    def forward(self, x):
        y = (F.interpolate(x, scale_factor=2, mode="nearest")[:, :, :3, :3]
             + F.pad(x, (1, 2, 0, 1), value=0.5)[:, :, :3, :3]
             + x.repeat(1, 2, 1, 1)[:, :4] + torch.stack([x, 2 * x], 1).sum(1)
             + x.flip(2) + x.roll(1, 2) + F.pad(x, (1, -1, 1, -1)))
        return self.conv(y).square().mean()
