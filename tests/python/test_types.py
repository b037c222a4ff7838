"""The element types bool, uint8..uint64 and float16 from Python (issue 15):
numpy arrays of every dtype in and out against NumPy references, and the
PyTorch operators of the types PyTorch has (bool, uint8, float16), with
gradients of float16 inputs in float16; uint16/32/64 operators are refused."""

import numpy as np
import pytest

import tenet
from conftest import model_source

torch = pytest.importorskip("torch")


def test_float16_storage_float32_compute():
    f = tenet.compile(model_source("zoo/tc_half.tn"), "tc_half")
    rng = np.random.default_rng(0)
    x = rng.random((3, 40)).astype(np.float16)
    w = rng.random((40, 2)).astype(np.float16)
    b = rng.random(2).astype(np.float32)
    y = f(x, w, b)
    assert y.dtype == np.float16
    # NumPy: float32 products and sums, one rounding to half, ReLU.
    z = x.astype(np.float32) @ w.astype(np.float32) + b
    want = np.maximum(z.astype(np.float16), np.float16(0))
    np.testing.assert_allclose(y.astype(np.float32), want.astype(np.float32), rtol=1e-3)


def test_float16_operator_gradients_are_float16():
    op = tenet.torch_op(model_source("zoo/tc_half.tn"), "tc_half")
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.random((3, 4)), dtype=torch.float16, requires_grad=True)
    w = torch.tensor(rng.random((4, 2)), dtype=torch.float16, requires_grad=True)
    b = torch.tensor(rng.random(2), dtype=torch.float32, requires_grad=True)
    y = op(x, w, b)
    assert y.dtype == torch.float16
    y.float().sum().backward()
    assert (x.grad.dtype, w.grad.dtype, b.grad.dtype) == (torch.float16, torch.float16,
                                                          torch.float32)
    x32, w32, b32 = (t.detach().float().requires_grad_() for t in (x, w, b))
    torch.relu(x32 @ w32 + b32).sum().backward()
    torch.testing.assert_close(x.grad.float(), x32.grad, rtol=2e-3, atol=1e-3)
    torch.testing.assert_close(w.grad.float(), w32.grad, rtol=2e-3, atol=1e-3)
    torch.testing.assert_close(b.grad, b32.grad)


def test_bool_mask_numpy_and_torch():
    source = model_source("zoo/tc_bool.tn")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    keep = rng.random((3, 4)) > 0.5
    y, active = tenet.compile(source, "tc_bool")(x, keep)
    on = (x > 0) & keep
    np.testing.assert_allclose(y, np.where(on, x, np.float32(0.1) * x + keep * x * x), rtol=1e-6)
    assert active.dtype == np.int32
    np.testing.assert_array_equal(active, on.sum(1))
    op = tenet.torch_op(source, "tc_bool")
    xt = torch.tensor(x, requires_grad=True)
    yt, at = op(xt, torch.tensor(keep))
    yt.sum().backward()
    # dy/dx: 1 where on, else 0.1 + 2 x keep.
    want = np.where(on, 1, np.float32(0.1) + 2 * keep * x).astype(np.float32)
    np.testing.assert_allclose(xt.grad.numpy(), want, rtol=1e-6)


def test_unsigned_wraparound_numpy():
    f = tenet.compile(model_source("zoo/tc_unsigned.tn"), "tc_unsigned")
    x = np.ones((3, 4), np.float32)
    code = np.array([[200, 3, 17, 99]] * 3, np.uint8)
    zero = np.array([1, 2, 3, 4], np.uint16)
    scale = np.array([1, 2, 3, 4], np.uint32)
    ids = np.array([0, 4, 2**63], np.uint64)
    y, sum8, down, ratio = f(x, code, zero, scale, ids)
    np.testing.assert_allclose(
        y, (code.astype(np.int32) - zero.astype(np.int32)) / (scale + 1).astype(np.float32),
        rtol=1e-6)
    assert sum8.dtype == np.uint8
    np.testing.assert_array_equal(sum8, (code * np.uint8(100)).sum(1, dtype=np.uint8))
    d = ids - np.uint64(5)  # wraps below 0, as in C++
    np.testing.assert_array_equal(down, d)
    np.testing.assert_array_equal(ratio, d // np.uint64(3) + d % np.uint64(3) +
                                  (d > 10).astype(np.uint64))


def test_torch_operator_refuses_limited_unsigned_dtypes():
    with pytest.raises(TypeError, match="input 'zero' is uint16, which PyTorch supports only "
                                        "in part"):
        tenet.torch_op(model_source("zoo/tc_unsigned.tn"), "tc_unsigned")


def test_float16_and_bool_operators_under_torch_compile():
    op = tenet.torch_op(model_source("zoo/tc_half.tn"), "tc_half")
    x = torch.rand(3, 4, dtype=torch.float16, requires_grad=True)
    w = torch.rand(4, 2, dtype=torch.float16, requires_grad=True)
    b = torch.rand(2, requires_grad=True)
    compiled = torch.compile(lambda x, w, b: op(x, w, b).float().sum(), fullgraph=True)
    loss = compiled(x, w, b)
    loss.backward()
    assert loss.item() == op(x, w, b).float().sum().item()
    assert (x.grad.dtype, w.grad.dtype) == (torch.float16, torch.float16)
    mask_op = tenet.torch_op(model_source("zoo/tc_bool.tn"), "tc_bool")
    xb = torch.randn(3, 4)
    keep = torch.rand(3, 4) > 0.5
    y, active = torch.compile(mask_op, fullgraph=True)(xb, keep)
    assert active.dtype == torch.int32
    torch.testing.assert_close(active, ((xb > 0) & keep).sum(1, dtype=torch.int32))
