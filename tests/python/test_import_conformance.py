"""The importer against PyTorch on hostile values (issue 27): every translated op
(python/tenet/importer/ops/*.py) on NaN, +-inf, -0.0, ties, out-of-range indices and
labels, empty and size-1 dimensions. Forward values, with NaN where PyTorch has NaN,
and the gradients of the float inputs (vector-Jacobian products with random output
weights, so a NaN in one output does not spread to the rest) must match PyTorch's;
where PyTorch raises, the imported module raises too.

Each group of ops is one module, so one import and one JIT compile per group."""

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import tenet

NAN, INF = float("nan"), float("inf")
# every pair of these meets somewhere in (X, Y): NaN against numbers and infinities,
# signed zeros against each other, ties, and ordinary values
HOSTILE = [NAN, INF, -INF, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1.0, 2.0]
X = torch.tensor(HOSTILE, dtype=torch.float64).reshape(3, 4)
Y = torch.tensor([1.0, NAN, INF, 0.0, -0.0, 1.0, INF, -INF, 0.5, 3.0, -1.0, NAN],
                 dtype=torch.float64).reshape(3, 4)
POSITIVE = torch.tensor([0.5, 2.0, 1.0, 3.0], dtype=torch.float64)


def _outputs(value):
    return value if isinstance(value, tuple) else (value,)


def _grads(outputs, inputs):
    """The gradients of the float inputs for random weights of the float outputs."""
    pairs = [(o, torch.randn(o.shape, dtype=o.dtype)) for o in outputs if o.requires_grad]
    wanted = [a for a in inputs if a.requires_grad]
    if not pairs or not wanted:
        return []
    found = torch.autograd.grad([o for o, _ in pairs], wanted, [w for _, w in pairs],
                                allow_unused=True)
    return [torch.zeros_like(a) if g is None else g for a, g in zip(wanted, found)]


def conform(model, args, *, training=True, grad=True, dynamic_batch=False, skip_grad=()):
    """``model(*args)`` through tenet.from_torch(...).module() against PyTorch: every
    output (NaN positions included) and the gradient of every float argument."""
    torch.manual_seed(0)
    model = model.to(torch.float64)
    reference = copy.deepcopy(model).train(training)
    program = tenet.from_torch(copy.deepcopy(model).train(training), args,
                               dynamic_batch=dynamic_batch)
    module = program.module().train(training)

    def leaves():
        return [a.detach().clone().requires_grad_(grad and a.is_floating_point())
                for a in args]

    ours, theirs = leaves(), leaves()
    got, want = _outputs(module(*ours)), _outputs(reference(*theirs))
    assert len(got) == len(want)
    wrong = [_differs(f"output {k}", a.detach(), b.detach())
             for k, (a, b) in enumerate(zip(got, want))]
    if grad:
        wrong += _compare_grads(got, want, ours, theirs, skip_grad)
    wrong = [w for w in wrong if w]
    assert not wrong, "\n".join(wrong) + f"\n{program.source}"
    return program


def _differs(what, got, want):
    """None, or a line saying where ``got`` is not ``want``."""
    try:
        torch.testing.assert_close(got, want, equal_nan=True)
    except AssertionError:
        bad = ~(torch.isclose(got, want, equal_nan=True) if got.is_floating_point()
                else got == want) if got.shape == want.shape else None
        where = bad.nonzero().tolist() if bad is not None else "shape"
        return (f"{what}: got {got[bad].tolist() if bad is not None else got.shape}, "
                f"PyTorch {want[bad].tolist() if bad is not None else want.shape} at {where}")
    return None


def _compare_grads(got, want, ours, theirs, skip_grad):
    keep = [k for k in range(len(want)) if k not in skip_grad]
    torch.manual_seed(1)
    mine = _grads([got[k] for k in keep], ours)
    torch.manual_seed(1)
    expected = _grads([want[k] for k in keep], theirs)
    wrong = []
    for n, (g, h) in enumerate(zip(mine, expected)):
        if g.dim() and len(g) == len(got) and ours[n].dim() > 1:  # per-op slices
            wrong += [_differs(f"gradient of argument {n} from output {k}", g[k], h[k])
                      for k in keep]
        else:
            wrong.append(_differs(f"gradient of argument {n}", g, h))
    return wrong


class PerOp(nn.Module):
    """Op k of ``ops`` applied to slice k of each argument: the gradient of slice k is
    op k's alone (the imported module's backward runs every op's, and an op whose
    output gradient is 0 still gives 0 * inf = NaN, in its own slice only)."""

    def __init__(self, ops):
        super().__init__()
        self.ops = ops

    def forward(self, *args):
        return tuple(op(*(a[k] for a in args)) for k, op in enumerate(self.ops))


def stacked(value, count):
    return value.unsqueeze(0).expand(count, *value.shape).clone()


UNARY = [
    F.relu, torch.neg, torch.exp, torch.log, torch.log1p, torch.expm1, torch.sqrt,
    torch.rsqrt, torch.abs, torch.tanh, torch.sigmoid, torch.erf, torch.sin, torch.cos,
    torch.reciprocal, torch.sign, torch.square, lambda x: x.pow(3), lambda x: x.pow(0.5),
    F.elu, lambda x: F.leaky_relu(x, 0.1), F.gelu, lambda x: F.gelu(x, approximate="tanh"),
    F.silu, F.softplus, F.logsigmoid, F.hardswish, F.hardsigmoid, F.mish, F.hardtanh,
    F.relu6, lambda x: x.clamp(-1, 1), lambda x: x.clamp(min=0.5),
    lambda x: x.clamp(max=-0.5), lambda x: x.clamp(1, -1), lambda x: torch.tanh(x).detach() * x,
    lambda x: x.clone() + 1, lambda x: x / 2, lambda x: 2 - x, lambda x: x * INF,
    lambda x: x.clamp(max=INF), lambda x: torch.full_like(x, -INF) + x,
]

BINARY = [
    torch.add, torch.sub, torch.mul, torch.div, lambda x, y: x + 2 * y,
    lambda x, y: x - 0.5 * y, torch.maximum, torch.minimum,
    lambda x, y: torch.where(x > y, x, y), lambda x, y: x > y, lambda x, y: x >= y,
    lambda x, y: x < y, lambda x, y: x <= y, lambda x, y: x == y, lambda x, y: x != y,
    lambda x, y: (x > 0) & (y > 0), lambda x, y: (x > 0) | (y > 0), lambda x, y: ~(x > 0),
    lambda x, y: torch.pow(y.abs() + 0.5, x), lambda x, y: torch.pow(x, y),
]


# export writes softplus, logsigmoid and hardswish out in primitives (where, exp, log1p,
# clamp, ...), whose derivatives Tenet takes; at NaN and inf those differ from PyTorch's
# fused backward kernels (NaN against a number), so their gradients are compared
# on ordinary values only (test_import_models.py)
DECOMPOSED = [UNARY.index(f) for f in (F.softplus, F.logsigmoid, F.hardswish)]


def test_unary_elementwise_ops():
    conform(PerOp(UNARY), (stacked(X, len(UNARY)),), skip_grad=DECOMPOSED)


def test_binary_elementwise_ops():
    # pow's gradients at 0 ** 0 and NaN ** x: PyTorch masks them (pow_backward), Tenet
    # differentiates pow(a, b) as it is (b * pow(a, b - 1), pow(a, b) * log(a))
    conform(PerOp(BINARY), (stacked(X, len(BINARY)), stacked(Y, len(BINARY))),
            skip_grad=(len(BINARY) - 2, len(BINARY) - 1))


def test_a_clamp_between_tensors_is_refused_not_computed_otherwise():
    with pytest.raises(tenet.TorchImportError, match="clamp"):
        tenet.from_torch(PerOp([lambda x, y: x.clamp(y[0], y[1])]), (X[None], Y[None]))


class Lookups(nn.Module):
    """The ops that read at computed indices, and the losses export writes with gather."""

    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(5, 3)

    def forward(self, x, label, rows):
        return (F.cross_entropy(x, label), F.nll_loss(F.log_softmax(x, 1), label,
                                                        reduction="none"),
                F.cross_entropy(x, label, reduction="sum"), x.gather(1, rows[:, None]),
                self.table(rows), torch.index_select(x, 1, rows), x[:, rows])


# Labels with ignore_index (-100) and rows with a negative index (x[:, -1] is the last)
LABELS = torch.tensor([0, -100, 2])
ROWS = torch.tensor([1, 0, 3])


def test_lookups_and_losses_on_hostile_values():
    conform(Lookups(), (X, LABELS, ROWS))
    conform(Lookups(), (X, LABELS, torch.tensor([1, 0, 2])))


@pytest.mark.parametrize("label,rows", [([0, 4, 2], [1, 0, 3]), ([0, -1, 2], [1, 0, 3]),
                                        ([0, 1, 2], [1, 5, 3]), ([0, 1, 2], [1, -5, 3])])
def test_an_index_or_label_out_of_range_is_an_error_as_in_pytorch(label, rows):
    args = (X, torch.tensor(label), torch.tensor(rows))
    model = Lookups().double()
    with pytest.raises((IndexError, RuntimeError)):
        model(*args)
    module = tenet.from_torch(model, (X, LABELS, ROWS), dynamic_batch=False).module()
    # the message starts at the op's Python line (and its module, for a submodule's op)
    with pytest.raises(tenet.BindError, match=r"^(table \(Embedding\)  )?"
                                              r"test_import_conformance\.py:\d+: .*outside"):
        module(*args)


class Norms(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)
        self.bn2 = nn.BatchNorm2d(2)
        self.ln = nn.LayerNorm(4)
        self.gn = nn.GroupNorm(2, 4)
        self.drop = nn.Dropout(1.0)

    def forward(self, x, image):
        return (self.bn(x), self.bn2(image), self.ln(x), self.gn(x[:, :, None]),
                self.drop(x), F.softmax(x, 1), F.log_softmax(x, 0))


IMAGE = torch.tensor(HOSTILE[:8] + [0.25] * 16, dtype=torch.float64).reshape(3, 2, 2, 2)


@pytest.mark.parametrize("training", [True, False])
def test_norms_softmax_and_dropout_on_hostile_values(training):
    conform(Norms(), (X, IMAGE), training=training)


def test_batch_norm_on_one_value_per_channel_is_refused_as_in_pytorch():
    bn = nn.BatchNorm1d(4).double()
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        bn(X[:1])
    with pytest.raises(tenet.TorchImportError, match="more than 1 value per channel"):
        tenet.from_torch(bn, (X[:1],), dynamic_batch=False)
    module = tenet.from_torch(bn, (X[1:],)).module()  # a batch of B
    before = bn.running_var.clone()
    with pytest.raises(tenet.BindError, match="needs_more_than_1_value_per_channel"):
        module(X[:1])
    assert torch.equal(bn.running_var, before)  # no NaN written into the module
    assert module(X[1:]).shape == (2, 4)


class Pools(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 2, padding=1)

    def forward(self, image):
        return (F.max_pool2d(image, 2), F.max_pool2d(image, 3, 1, 1), F.avg_pool2d(image, 2),
                F.adaptive_avg_pool2d(image, 1), self.conv(image), image.amax((2, 3)),
                image.amin(1), image.sum((1, 2)), image.mean(3), image.var(1))


# NaN alone in a window, NaN with inf, a window of -inf, ties, signed zeros
POOLED = torch.tensor([[NAN, 1.0, INF, NAN], [2.0, 2.0, -INF, -INF], [-INF, -INF, 0.0, -0.0],
                       [-INF, -INF, 3.0, 3.0]], dtype=torch.float64)
POOL_INPUT = torch.stack([POOLED, POOLED.flip(1)])[None].expand(2, 2, 4, 4).clone()


def test_pooling_convolution_and_reductions_on_hostile_values():
    # the max pools' gradients: below (a window holding NaN passes none)
    conform(Pools(), (POOL_INPUT,), skip_grad=(0, 1))


def test_max_pool_gradient_goes_to_the_maximum_and_none_through_a_nan_window():
    """PyTorch gives a NaN window's gradient to its NaN pixel; Tenet's import passes none
    there (its output is NaN either way; docs/import.md says why). Every other window,
    -inf and ties included, routes it as PyTorch does."""
    pool = nn.MaxPool2d(2)
    program = tenet.from_torch(pool, (POOL_INPUT,), dynamic_batch=False)
    ours = POOL_INPUT.clone().requires_grad_()
    theirs = POOL_INPUT.clone().requires_grad_()
    got, want = program.module()(ours), pool(theirs)
    torch.testing.assert_close(got, want, equal_nan=True)
    cotangent = torch.randn_like(want)
    got.backward(cotangent)
    want.backward(cotangent)
    nan_window = want.isnan().repeat_interleave(2, 2).repeat_interleave(2, 3)
    assert nan_window.any() and not nan_window.all()
    torch.testing.assert_close(ours.grad[~nan_window], theirs.grad[~nan_window])
    assert (ours.grad[nan_window] == 0).all()


class Orders(nn.Module):
    """Running sums and products, sorts, top-k and arg-extremes: NaN sorts above every
    number (last ascending, first descending), ties and signed zeros keep their order,
    argmax/argmin take the first NaN or the first extreme."""

    def forward(self, x):
        return (x.cumsum(1), x.cumsum(0), x.cumprod(1), torch.sort(x, 1).values,
                torch.sort(x, 1, descending=True).values, torch.sort(x, 0)[1],
                torch.topk(x, 2, 1).values, torch.topk(x, 3, 1, largest=False).indices,
                x.argmax(1), x.argmin(0), x.argmax(), x.argmin(1, keepdim=True))


def test_scans_sorts_and_arg_extremes_on_hostile_values():
    # cumprod's gradient through inf and NaN: PyTorch's backward divides where it can
    # (inf / inf), Tenet's product rule multiplies the other factors; compared on
    # ordinary values (test_import_models.py)
    conform(Orders(), (X,), skip_grad=(2,))


class Running(nn.Module):
    """Running extremes (the last of ties, the last NaN so far) and log-sum-exp."""

    def forward(self, x):
        return (*torch.cummax(x, 1), *torch.cummin(x, 0), torch.logcumsumexp(x, 1),
                torch.logcumsumexp(x, 0))


class RunningIntegers(nn.Module):
    def forward(self, n):
        return (*torch.cummax(n, 1), *torch.cummin(n, 1))


def test_running_extremes_and_log_sum_exp_on_hostile_values():
    # logcumsumexp's gradient through inf and NaN: PyTorch's backward subtracts inf
    # from inf where Tenet's derivative is 0 or NaN; compared on ordinary values below
    conform(Running(), (X,), skip_grad=(4, 5))
    conform(Running(), (Y,), skip_grad=(4, 5))
    conform(Running(), (torch.randn(5, 6, dtype=torch.float64) * 30,))
    ties = torch.tensor([[3, 1, 3, 3], [-2, -2, 5, -2], [0, 0, 0, 0]])
    conform(RunningIntegers(), (ties,), grad=False)


class Shapes(nn.Module):
    """Views, copies and products on hostile values and size-1 dimensions."""

    def forward(self, x, column):
        return (torch.cat([x, column, x], 1), x.flip(1), F.pad(x, (1, 2), value=-INF),
                x.repeat(2, 1), x.t() @ column, x.reshape(4, 3)[1:], x[:, :1].squeeze(1),
                column.expand(3, 4) * x, torch.stack([x, -x]).sum(0), x.roll(1, 1),
                torch.where(column > 0, x, column), x.sum(1, keepdim=True) * column,
                x.mean(0, keepdim=True), F.softmax(column, 1), column.amax(1))


def test_shape_ops_and_size_1_dimensions_on_hostile_values():
    column = torch.tensor([[NAN], [-0.0], [INF]], dtype=torch.float64)
    conform(Shapes(), (X, column))


def test_a_statement_in_a_shared_loop_reads_its_own_rows():
    """The Shapes group found it: sum_2(i, j) +=! x(i, r) where j in 0:1 shared the loop of
    a statement indexed (j, k), named j; its own j loop, inside, was named j too and
    shadowed it, so every row read row 0 (compiled code only; the interpreter was right)."""
    import numpy as np
    program = tenet.compile("""
def f(float(2, 3, 4) v, float(3, 4) x, float(3, 1) c) -> (s, m) {
  s(j, k) +=! v(r, j, k)
  t(i, j) +=! x(i, r) where j in 0:1
  m(i, j) = t(i, j) * c(i, j)
}""")
    args = (np.ones((2, 3, 4), np.float32), np.arange(12, dtype=np.float32).reshape(3, 4),
            np.ones((3, 1), np.float32))
    assert program(*args)[1].ravel().tolist() == [6, 22, 38]


@pytest.mark.parametrize("offsets", [[0, 7], [3, 1], [-1, 2], [0, 3, 2]])
def test_embedding_bag_offsets_that_pytorch_refuses_are_an_error(offsets):
    # the ragged range clipped them: bags summed over whatever the offsets left in range
    bag = nn.EmbeddingBag(10, 3, mode="sum")
    tokens = torch.tensor([1, 2, 3, 4])
    with pytest.raises(RuntimeError):
        bag(tokens, torch.tensor(offsets))
    module = tenet.from_torch(bag, (tokens, torch.tensor([0, 2]))).module()
    with pytest.raises(tenet.BindError, match="offsets_must_start_at_0_rise_and_end_within_indices"):
        module(tokens, torch.tensor(offsets))
    torch.testing.assert_close(module(tokens, torch.tensor([0, 4])),
                               bag(tokens, torch.tensor([0, 4])))
