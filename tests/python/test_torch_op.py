"""tenet.torch_op: a PyTorch custom operator with autograd, in eager mode, under
torch.autograd.gradcheck, inside torch.compile(fullgraph=True), and from C++
through the dispatcher."""

import os
import pathlib

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
