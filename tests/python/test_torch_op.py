"""tenet.torch_op: a PyTorch custom operator with autograd, in eager mode, under
torch.autograd.gradcheck, inside torch.compile(fullgraph=True), and from C++
through the dispatcher."""

import os
import pathlib
import types

import numpy as np
import pytest

import tenet
from conftest import REPO, model_source

torch = pytest.importorskip("torch")

SQUASH = model_source("zoo/squash.tn")
CONV_STRIDE2 = model_source("zoo/conv2d_stride2.tn")
CROSS_ENTROPY = model_source("zoo/cross_entropy.tn")


def squash_reference(s):
    n2 = (s * s).sum(-1, keepdim=True)
    return s * torch.sqrt(n2 + 1e-7) / (1 + n2)


@pytest.fixture(scope="module")
def squash_op():
    return tenet.torch_op(SQUASH, "squash")


def test_registered_with_the_dispatcher(squash_op):
    assert squash_op.qualname.startswith("tenet::squash_")
    packet = getattr(torch.ops.tenet, squash_op.name)
    assert str(packet.default._schema) == f"{squash_op.qualname}(Tensor s) -> Tensor"
    backward = getattr(torch.ops.tenet, squash_op.name + "_backward")
    assert str(backward.default._schema) == \
        f"{squash_op.qualname}_backward(Tensor s, Tensor d_v) -> Tensor"
    # the same program gives the same operator; another name makes another one
    assert tenet.torch_op(SQUASH, "squash") is squash_op


def test_eager_forward_and_backward_match_pytorch(squash_op):
    s = torch.randn(3, 4, 5, requires_grad=True)
    v = squash_op(s)
    assert v.grad_fn is not None
    cot = torch.randn_like(v)
    (v * cot).sum().backward()
    ref_s = s.detach().clone().requires_grad_()
    ref = squash_reference(ref_s)
    (ref * cot).sum().backward()
    torch.testing.assert_close(v, ref, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(s.grad, ref_s.grad, rtol=1e-5, atol=1e-6)


def test_compile_result_routes_tensors_that_require_grad_through_autograd():
    f = tenet.compile(SQUASH, "squash")
    s = torch.randn(2, 3, 4, requires_grad=True)
    v = f(s)
    assert isinstance(v, torch.Tensor) and v.grad_fn is not None
    v.sum().backward()
    assert s.grad is not None and s.grad.abs().sum() > 0
    with torch.no_grad():
        assert f(s).grad_fn is None


def test_torch_autograd_gradcheck_float64(squash_op):
    s = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    assert squash_op(s).dtype == torch.float64
    assert torch.autograd.gradcheck(squash_op, (s,), eps=1e-6, atol=1e-8, rtol=1e-6)


def test_gradcheck_with_integer_input_and_scalar_output():
    op = tenet.torch_op(CROSS_ENTROPY, "cross_entropy")
    z = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    label = torch.tensor([0, 3, 4, 1], dtype=torch.int32)
    assert torch.autograd.gradcheck(lambda z: op(z, label), (z,))
    loss = op(z, label)
    ref = torch.nn.functional.cross_entropy(z, label.long())
    torch.testing.assert_close(loss, ref, rtol=1e-12, atol=1e-12)


def test_float64_variant_of_a_program_with_a_loop():
    # routing.tn: 3 routing iterations in a `for` loop, carried logits
    op = tenet.torch_op(model_source("routing.tn"), "routing")
    uh = torch.randn(2, 3, 4, 5, dtype=torch.float64, requires_grad=True)
    v = op(uh=uh)
    assert v.dtype == torch.float64 and v.shape == (2, 4, 5)
    v32 = op(uh.detach().float())
    torch.testing.assert_close(v32, v.detach().float(), rtol=1e-5, atol=1e-6)
    assert torch.autograd.gradcheck(op, (uh,))


def test_opcheck_schema_fake_and_autograd_registration(squash_op):
    s = torch.randn(2, 3, 4, requires_grad=True)
    torch.library.opcheck(squash_op.op, (s,))
    conv = tenet.torch_op(CONV_STRIDE2, "conv2d_stride2")
    args = (torch.randn(2, 3, 9, 8, requires_grad=True), torch.randn(4, 3, 3, 2, requires_grad=True),
            torch.randn(4, requires_grad=True))
    torch.library.opcheck(conv.op, args)


def test_fake_kernel_infers_shapes_from_symbolic_sizes():
    conv = tenet.torch_op(CONV_STRIDE2, "conv2d_stride2")
    img = torch.empty(2, 3, 9, 8, device="meta")
    out = conv(img, torch.empty(4, 3, 3, 2, device="meta"), torch.empty(4, device="meta"))
    # (H - KH) / 2 + 1 and (W - KW) / 2 + 1
    assert out.shape == (2, 4, 4, 4) and out.device.type == "meta"
    with pytest.raises(ValueError, match=r"input 'bias': expected float32\[O\] = \[4\], got "
                                         r"float32\[5\]"):
        conv(img, torch.empty(4, 3, 3, 2, device="meta"), torch.empty(5, device="meta"))


@pytest.mark.parametrize("name", ["bad name!", "a::b", "", 5, "9lives"])
def test_an_operator_name_must_be_an_identifier(name):
    # PyTorch's schema parser failed on it with its own message (or took "").
    with pytest.raises(ValueError, match=r"name: an operator's name must be an identifier"):
        tenet.torch_op(SQUASH, "squash", name=name)


def test_meta_and_cpu_tensors_mixed_are_an_error():
    # The fake kernel made its result on the first argument's device: a CPU tensor of
    # uninitialised memory for a call that computed nothing.
    conv = tenet.torch_op(CONV_STRIDE2, "conv2d_stride2")
    with pytest.raises(TypeError, match=r"argument 'w': expected a tensor on cpu like argument "
                                        r"'img', got device meta"):
        conv(torch.empty(2, 3, 9, 8), torch.empty(4, 3, 3, 2, device="meta"), torch.empty(4))


def test_torch_compile_fullgraph_forward_and_backward(squash_op):
    def loss_fn(s, scale):
        return (squash_op(s * scale) ** 2).sum()

    compiled = torch.compile(loss_fn, fullgraph=True)
    s = torch.randn(3, 4, 5, requires_grad=True)
    scale = torch.tensor(1.5)
    loss = compiled(s, scale)
    loss.backward()
    ref_s = s.detach().clone().requires_grad_()
    ref = (squash_reference(ref_s * scale) ** 2).sum()
    ref.backward()
    torch.testing.assert_close(loss, ref, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(s.grad, ref_s.grad, rtol=1e-5, atol=1e-6)
    explanation = torch._dynamo.explain(loss_fn)(s, scale)
    assert explanation.graph_break_count == 0 and explanation.graph_count == 1


def test_torch_compile_dynamic_shapes_use_symbolic_sizes():
    conv = tenet.torch_op(CONV_STRIDE2, "conv2d_stride2")
    compiled = torch.compile(lambda x, w, b: conv(x, w, b).relu(), fullgraph=True, dynamic=True,
                             backend="aot_eager")
    w, b = torch.randn(4, 3, 3, 3), torch.randn(4)
    for height in (9, 12):
        x = torch.randn(2, 3, height, 10)
        want = torch.nn.functional.conv2d(x, w, b, stride=2).relu()
        torch.testing.assert_close(compiled(x, w, b), want, rtol=1e-4, atol=1e-5)


def test_non_contiguous_inputs(squash_op):
    base = torch.randn(5, 4, 3, requires_grad=True)
    s = base.transpose(0, 2)  # (3, 4, 5), not contiguous
    assert not s.is_contiguous()
    v = squash_op(s)
    torch.testing.assert_close(v, squash_reference(s), rtol=1e-5, atol=1e-6)
    v.sum().backward()  # the cotangent is an expanded (stride 0) tensor
    ref_base = base.detach().clone().requires_grad_()
    squash_reference(ref_base.transpose(0, 2)).sum().backward()
    torch.testing.assert_close(base.grad, ref_base.grad, rtol=1e-5, atol=1e-6)


def test_bad_arguments_are_clear_errors(squash_op):
    with pytest.raises(TypeError, match=r"argument 's': expected dtype float32 \(or float64\), "
                                        r"got float16"):
        squash_op(torch.randn(2, 3, 4, dtype=torch.float16))
    with pytest.raises(TypeError, match=r"argument 's': expected dtype float32 \(or float64\), "
                                        r"got int64"):
        squash_op(torch.ones(2, 3, 4, dtype=torch.int64))
    with pytest.raises(ValueError, match=r"argument 's': expected rank 3 \(float32\[B, N, D\]\), "
                                         r"got rank 2 \(shape \[3, 4\]\)"):
        squash_op(torch.randn(3, 4))
    conv = tenet.torch_op(CONV_STRIDE2, "conv2d_stride2")
    with pytest.raises(ValueError, match=r"input 'w': expected float32\[O, C, KH, KW\] = "
                                         r"\[4, 3, 3, 3\], got float32\[4, 2, 3, 3\]"):
        conv(torch.randn(2, 3, 9, 9), torch.randn(4, 2, 3, 3), torch.randn(4))
    with pytest.raises(TypeError, match=r"argument 'w': expected dtype float32 \(argument 'img' "
                                        r"is float32\), got float64"):
        conv(torch.randn(2, 3, 9, 9), torch.randn(4, 3, 3, 3, dtype=torch.float64),
             torch.randn(4))


def test_wrong_device_is_an_error_naming_the_argument(squash_op):
    if torch.cuda.is_available():
        bad = torch.randn(2, 3, 4, device="cuda")
        with pytest.raises(TypeError, match=r"argument 's': expected a CPU tensor, got device cuda"):
            squash_op(bad)
    f = tenet.compile(SQUASH, "squash")  # eager Tenet calls refuse meta tensors too
    with pytest.raises(TypeError, match=r"argument 's': expected a CPU tensor, got device meta"):
        f(torch.empty(2, 3, 4, device="meta"))


@pytest.fixture(scope="module")
def dispatcher_caller():
    from torch.utils import cpp_extension
    build = REPO / "build-python" / "torch-extensions" / "tenet_dispatcher_call"
    build.mkdir(parents=True, exist_ok=True)
    cpp_extension.load(name="tenet_dispatcher_call",
                       sources=[str(pathlib.Path(__file__).with_name("dispatcher_call.cpp"))],
                       build_directory=str(build), is_python_module=False,
                       extra_cflags=["-O1"], verbose=bool(os.environ.get("TENET_VERBOSE")))
    return torch.ops.tenet_cpp_test


def test_called_from_cpp_through_the_dispatcher(dispatcher_caller):
    op = tenet.torch_op(CROSS_ENTROPY, "cross_entropy")
    z = torch.randn(4, 5, requires_grad=True)
    label = torch.tensor([1, 0, 4, 2], dtype=torch.int32)
    (loss,) = dispatcher_caller.call(op.qualname, [z, label])
    torch.testing.assert_close(loss, op(z, label))
    d_z, d_label = dispatcher_caller.call_and_backward(op.qualname, [z, label])
    ref_z = z.detach().clone().requires_grad_()
    torch.nn.functional.cross_entropy(ref_z, label.long()).backward()
    torch.testing.assert_close(d_z, ref_z.grad, rtol=1e-5, atol=1e-7)
    assert d_label.numel() == 0  # integer input: no gradient


def test_results_are_independent_tensors(squash_op):
    s = torch.randn(2, 2, 3)
    first, second = squash_op(s), squash_op(s)
    first.add_(1)
    torch.testing.assert_close(second, squash_reference(s), rtol=1e-5, atol=1e-6)
    assert isinstance(first.numpy(), np.ndarray)


# Issue 27: autograd passes no gradient through an output the loss does not use. With a
# zero cotangent for it, the backward computed 0 * (d z / d x) = 0 * (1 / 0) = NaN at x = 0.
TWO_OUTPUTS = """
def two(float(N) x, float(N) w) -> (y, z) {
  y(i) = x(i) * x(i) * w(i)
  z(i) = log(x(i))
}
"""


def two_reference(x, w):
    return x * x * w, torch.log(x)


def _leaves(*tensors):
    return [t.detach().clone().requires_grad_() for t in tensors]


def test_an_unused_output_passes_no_gradient():
    op = tenet.torch_op(TWO_OUTPUTS, "two")
    x0, w0 = torch.tensor([0.0, 1.0, 2.0, 0.0]), torch.tensor([1.0, -2.0, 0.5, 3.0])
    for dtype in (torch.float32, torch.float64):
        x, w = _leaves(x0.to(dtype), w0.to(dtype))
        rx, rw = _leaves(x0.to(dtype), w0.to(dtype))
        y, z = op(x, w)
        assert z[0] == -float("inf")
        y.sum().backward()
        ry, _ = two_reference(rx, rw)
        ry.sum().backward()
        assert not x.grad.isnan().any() and not w.grad.isnan().any()
        torch.testing.assert_close(x.grad, rx.grad)
        torch.testing.assert_close(w.grad, rw.grad)
    # the product of y alone ran: the partial backward, with the vjp of y made once
    partial = getattr(torch.ops.tenet, op.name + "_backward_partial")
    assert str(partial.default._schema) == (f"{op.qualname}_backward_partial(Tensor x, "
                                            f"Tensor w, Tensor? d_y, Tensor? d_z) -> "
                                            f"(Tensor, Tensor)")
    assert op.partial_vjp([0]) is op.partial_vjp((0,))
    assert op.partial_vjp([0]).input_names == ["x", "w", "d_y"]
    assert op.partial_vjp([1, 0]) is op.function.backward or op.partial_vjp([0, 1]).key == \
        op.function.backward.key


def test_unused_outputs_through_autograd_grad():
    op = tenet.torch_op(TWO_OUTPUTS, "two")
    x, w = _leaves(torch.tensor([0.5, 1.0, 2.0]), torch.tensor([1.0, -2.0, 0.5]))
    y, z = op(x, w)
    d_z = torch.tensor([1.0, 2.0, 3.0])
    # z alone: d_x = d_z / x, d_w = 0
    g_x, g_w = torch.autograd.grad(z, [x, w], d_z, retain_graph=True)
    torch.testing.assert_close(g_x, d_z / x.detach())
    torch.testing.assert_close(g_w, torch.zeros(3))
    # both: the full backward
    g_x, = torch.autograd.grad([y, z], [x], [torch.ones(3), d_z], retain_graph=True)
    torch.testing.assert_close(g_x, 2 * x.detach() * w.detach() + d_z / x.detach())
    # no output with a gradient (autograd does not call it so; the formula alone): none
    ctx = types.SimpleNamespace(saved_tensors=(x, w), needs_input_grad=(True, True))
    assert op._autograd_backward(ctx, None, None) == (None, None)


def test_function_vjp_of_a_list_of_outputs():
    f = tenet.compile(TWO_OUTPUTS, "two")
    vjp = f.vjp(output=["y"])
    assert vjp.input_names == ["x", "w", "d_y"]
    assert vjp.output_names == ["y", "z", "d_x", "d_w"]
    # cotangents in the function's order, whatever the list's
    assert f.vjp(output=["z", "y"]).input_names == ["x", "w", "d_y", "d_z"]
    x, w = np.array([0.0, 1.0], np.float32), np.array([2.0, 3.0], np.float32)
    _, _, d_x, d_w = vjp(x, w, np.ones(2, np.float32))
    np.testing.assert_allclose(d_x, [0.0, 6.0])
    np.testing.assert_allclose(d_w, [0.0, 1.0])
    assert f.vjp(output=["y"]).key != f.vjp().key
    with pytest.raises(tenet.CompileError, match=r"function 'two' has no output named 'q' "
                                                 r"\(outputs: y, z\)"):
        f.vjp(output=["y", "q"]).input_names
    with pytest.raises(tenet.CompileError, match=r"output 'y' is named twice"):
        f.vjp(output=["y", "y"]).input_names
    with pytest.raises(ValueError, match=r"output: an empty list names no output"):
        f.vjp(output=[])
    with pytest.raises(TypeError, match=r"output must be an output's name or a list of them"):
        f.vjp(output=3)


def test_unused_outputs_under_torch_compile_and_opcheck():
    op = tenet.torch_op(TWO_OUTPUTS, "two")

    def loss_fn(x, w):
        y, _ = op(x, w)
        return y.sum()

    compiled = torch.compile(loss_fn, fullgraph=True)
    for x0 in ([0.5, 1.0, 2.0], [0.0, 1.0, 2.0]):
        x, w = _leaves(torch.tensor(x0), torch.tensor([1.0, -2.0, 0.5]))
        rx, rw = _leaves(x, w)
        compiled(x, w).backward()
        loss_fn(rx, rw).backward()
        # AOTAutograd traces the backward with no cotangent for z: the partial one runs
        assert not x.grad.isnan().any()
        torch.testing.assert_close(x.grad, rx.grad)
        torch.testing.assert_close(w.grad, rw.grad)
    x, w = torch.tensor([0.5, 1.0, 2.0]), torch.tensor([1.0, -2.0, 0.5])
    torch.library.opcheck(op.op, (x.requires_grad_(), w.requires_grad_()))
    torch.library.opcheck(op.partial_backward_op, (x.detach(), w.detach(), torch.ones(3), None))


def _many_outputs_source(count):
    """count + 1 inputs and count + 1 outputs: over 64 arguments, so the operators take
    and return lists of tensors. y_k = x_k * x_{k+1}, z = log(x_0)."""
    params = ", ".join(f"float(N) x{k}" for k in range(count + 1))
    outs = ", ".join([f"y{k}" for k in range(count)] + ["z"])
    body = "\n".join(f"  y{k}(i) = x{k}(i) * x{k + 1}(i)" for k in range(count))
    return f"def many({params}) -> ({outs}) {{\n{body}\n  z(i) = log(x0(i))\n}}\n"


def test_an_unused_output_of_a_packed_operator_passes_no_gradient():
    op = tenet.torch_op(_many_outputs_source(32), "many")
    assert op._packed
    xs = _leaves(*[torch.rand(3) + 0.5 for _ in range(33)])
    with torch.no_grad():
        xs[0][1] = 0.0
    refs = _leaves(*xs)
    results = op(*xs)
    # the loss uses y0 and y5 only
    (results[0].sum() + 2 * results[5].sum()).backward()
    (refs[0] * refs[1]).sum().add(2 * (refs[5] * refs[6]).sum()).backward()
    for k, (x, r) in enumerate(zip(xs, refs)):
        want = r.grad if r.grad is not None else torch.zeros(3)
        assert not x.grad.isnan().any(), k
        torch.testing.assert_close(x.grad, want)
    # every float output: the full (packed) backward
    xs = _leaves(*refs)
    results = op(*xs)
    torch.autograd.backward(results, [torch.ones(3)] * len(results))
    torch.testing.assert_close(xs[0].grad, xs[1].detach() + 1 / xs[0].detach())


def test_an_imported_module_passes_no_gradient_through_an_unused_output():
    """The importer's operators (Program.torch_op) too: a second output, and batch norm's
    running statistics (outputs that update buffers), reach no loss."""
    nn = torch.nn

    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.BatchNorm1d(3)

        def forward(self, x):
            return self.norm(x * x), torch.log(x)

    model = TwoHeads().double()
    x0 = torch.tensor([[0.0, 1.0, 2.0], [0.5, 0.0, 3.0]], dtype=torch.float64)
    module = tenet.from_torch(TwoHeads().double(), (x0,), dynamic_batch=False).module()
    ours, theirs = _leaves(x0, x0)
    y, z = module(ours)
    assert z[0, 0] == -float("inf")
    weights = torch.tensor([[1.0, -2.0, 0.5], [3.0, 1.0, -1.0]], dtype=torch.float64)
    (y * weights).sum().backward()
    (model(theirs)[0] * weights).sum().backward()
    assert not ours.grad.isnan().any()
    torch.testing.assert_close(ours.grad, theirs.grad)


def test_an_input_named_like_a_cotangent():
    """The backward's arguments are the vjp's own (AD names y's cotangent d_y.1 beside an
    input d_y), made identifiers for the schema; its results are each float input's
    gradient as AD marked it, not by name or position."""
    src = "def f(float(N) x, float(N) d_y) -> (y) {\n  y(i) = x(i) * d_y(i) * d_y(i)\n}\n"
    op = tenet.torch_op(src, "f")
    assert op.function.backward.input_names == ["x", "d_y", "d_y.1"]
    backward = getattr(torch.ops.tenet, op.name + "_backward")
    assert str(backward.default._schema) == (f"{op.qualname}_backward(Tensor x, Tensor d_y, "
                                             f"Tensor d_y_1) -> (Tensor, Tensor)")
    x, d_y = _leaves(torch.tensor([1.0, 2.0]), torch.tensor([3.0, -1.0]))
    op(x, d_y).sum().backward()
    torch.testing.assert_close(x.grad, d_y.detach() ** 2)
    torch.testing.assert_close(d_y.grad, 2 * x.detach() * d_y.detach())
