"""A call with gradients runs the forward that also returns what the derived backward
reads, and autograd's backward starts from those saved values instead of computing the
forward a second time (ad/split.h; docs/python.md, "Saved values")."""

import pytest

import tenet
from conftest import model_source

torch = pytest.importorskip("torch")
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

SOFTMAX = model_source("softmax.tn")
SQUASH = model_source("zoo/squash.tn")


class TenetCalls(TorchDispatchMode):
    """Records the names of the tenet:: operators dispatched under it."""

    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.name()
        if name.startswith("tenet::"):
            self.names.append(name.split("::")[1].split(".")[0])
        return func(*args, **(kwargs or {}))


def _kinds(names, op):
    """The recorded calls as the suffixes of op's operators ("", "_saving", ...)."""
    return [n[len(op.name):] for n in names]


def test_the_backward_reads_the_saved_values_and_does_not_recompute():
    op = tenet.torch_op(SOFTMAX, "softmax")
    assert op.saving is not None
    z = torch.randn(4, 7, requires_grad=True)
    with TenetCalls() as calls:
        p = op(z)
        (p * torch.arange(7.0)).sum().backward()
    assert _kinds(calls.names, op) == ["_saving", "_backward_saved"]
    ref = z.detach().clone().requires_grad_()
    (torch.softmax(ref, -1) * torch.arange(7.0)).sum().backward()
    torch.testing.assert_close(p, torch.softmax(ref, -1))
    torch.testing.assert_close(z.grad, ref.grad)


def test_saved_values_give_the_recomputing_backwards_bits():
    """The two halves are the whole program's statements: the same bits as the operator
    whose backward starts from the inputs (op.op)."""
    op = tenet.torch_op(SQUASH, "squash")
    s = torch.randn(3, 4, 5, dtype=torch.float64, requires_grad=True)
    cot = torch.randn(3, 4, 5, dtype=torch.float64)
    saved = torch.autograd.grad(op(s), s, cot)[0]
    recomputed = torch.autograd.grad(op.op(s), s, cot)[0]
    assert torch.equal(saved, recomputed)
    with torch.no_grad(), TenetCalls() as calls:
        op(s)
    assert _kinds(calls.names, op) == [""]  # no gradient to come: the plain forward


def test_the_halves_as_functions():
    f = tenet.compile(SOFTMAX, "softmax")
    forward = f.vjp(half="forward")
    backward = f.vjp(half="backward")
    assert forward.output_names[0] == "p"
    saved = backward.input_names[1:-1]
    assert saved and set(saved) <= set(forward.output_names)
    z = torch.randn(3, 5, dtype=torch.float64)
    d_p = torch.randn(3, 5, dtype=torch.float64)
    results = dict(zip(forward.output_names, forward(z)))
    d_z = backward(z, *[results[n] for n in saved], d_p)
    whole = f.vjp()(z, d_p)
    assert torch.equal(results["p"], whole[0]) and torch.equal(d_z, whole[1])
    with pytest.raises(ValueError, match="half must be"):
        f.vjp(half="middle")


def test_a_scalar_gradient_cannot_be_cut():
    f = tenet.compile(SOFTMAX, "softmax")
    with pytest.raises(tenet.CompileError, match="vector-Jacobian"):
        tenet.function.Function(f._program, f._source, "softmax",
                                tenet.function.grad_request(None, None, half="forward"))


def test_opcheck_of_the_saving_operators():
    op = tenet.torch_op(SQUASH, "squash")
    s = torch.randn(2, 3, 4, requires_grad=True)
    torch.library.opcheck(op.saving.op, (s,))
    results = op.saving.op(s)
    kept = [results[k].detach() for k in op.saving.kept]  # outputs the backward reads
    args = (s.detach(), *kept, results[-1], torch.randn_like(results[0]))
    torch.library.opcheck(op.saving.backward_op, args)


def test_under_torch_compile():
    op = tenet.torch_op(SOFTMAX, "softmax")
    step = torch.compile(lambda z: (op(z) * op(z).detach()).sum(), fullgraph=True)
    z = torch.randn(4, 6, requires_grad=True)
    step(z).backward()
    ref = z.detach().clone().requires_grad_()
    p = torch.softmax(ref, -1)
    (p * p.detach()).sum().backward()
    torch.testing.assert_close(z.grad, ref.grad)


def test_an_imported_module_with_buffers_saves_instead_of_recomputing():
    """Batch norm's running statistics are outputs that get no gradient: the module's
    operator marks them non-differentiable and its backward still starts from the saved
    values."""
    nn = torch.nn
    model = nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                          nn.Linear(4 * 4 * 4, 3)).double()
    x = torch.randn(2, 2, 6, 6, dtype=torch.float64)
    program = tenet.from_torch(model, (x,), dynamic_batch=False)
    module = program.module()
    op = program.torch_op(True)
    with TenetCalls() as calls:
        loss = module(x).square().sum()
        loss.backward()
    assert _kinds(calls.names, op) == ["_saving", "_backward_saved"]
    ours = {k: p.grad.clone() for k, p in module.named_parameters()}
    model.zero_grad()  # the module shares the model's parameters
    model(x).square().sum().backward()
    for k, p in model.named_parameters():
        assert ours[k].abs().max() > 0, k
        torch.testing.assert_close(ours[k], p.grad, msg=k)
