"""Outputs the caller supplies: ``y(i) += ...`` onto a declared output takes the
caller's array as the initial value and updates it in place (docs/language.md,
"Accumulating into an output the caller supplies")."""
import numpy as np
import pytest
import torch

import tenet

SOURCE = """
def acc(float(N, K) x) -> (float(N) y) {
  y(i) += x(i, k)
}
def peak(float(N, K) x) -> (float(N) m, float(N) twice) {
  twice(i) = x(i, 0) * 2
  m(i) max= x(i, k)
}
def scale(float(N) x) -> (float(N) y) {
  y(i) *= x(i)
  y(i) = y(i) + 1
}
"""


def test_numpy_update_in_place_equals_the_interpreter():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    y0 = rng.standard_normal(5).astype(np.float32)
    f = tenet.compile(SOURCE, "acc")
    assert [o.updates for o in f.outputs] == [1]
    y = y0.copy()
    out = f(x, y)
    assert out is y  # the caller's array, updated
    np.testing.assert_allclose(y, y0 + x.sum(axis=1), rtol=1e-6)
    reference = y0.copy()
    f.interpret(x, reference)
    np.testing.assert_array_equal(y, reference)


def test_maximum_onto_the_callers_values_and_another_output():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    m = np.zeros(6, np.float32)
    m[::2] = 10.0
    expected = np.maximum(m, x.max(axis=1))
    result, twice = tenet.compile(SOURCE, "peak")(x, m)
    assert result is m
    np.testing.assert_array_equal(m, expected)
    np.testing.assert_array_equal(twice, x[:, 0] * 2)


def test_read_only_or_number_arguments_are_refused():
    f = tenet.compile(SOURCE, "acc")
    x = np.ones((2, 3), np.float32)
    y = np.zeros(2, np.float32)
    y.flags.writeable = False
    with pytest.raises(TypeError, match="argument 'y': output 'y' is updated in place, so it "
                                        "must be a writable numpy array or torch tensor "
                                        r"\(got a read-only array\)"):
        f(x, y)
    g = tenet.compile("def s(float(N) x) -> (float() t) { t += x(i) }")
    with pytest.raises(TypeError, match=r"\(got float\)"):
        g(np.ones(3, np.float32), 1.0)


def test_torch_autograd_through_an_update_matches_pytorch():
    torch.manual_seed(0)
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    base = torch.randn(5, dtype=torch.float64, requires_grad=True)
    y = base * 1.0  # not a leaf, so it may be updated in place
    out = tenet.compile(SOURCE, "scale")(x, y)
    assert out is y
    (out * torch.arange(5.0, dtype=torch.float64)).sum().backward()
    xr = x.detach().clone().requires_grad_()
    br = base.detach().clone().requires_grad_()
    yr = br * 1.0
    yr.mul_(xr).add_(1)
    (yr * torch.arange(5.0, dtype=torch.float64)).sum().backward()
    torch.testing.assert_close(y, yr, rtol=1e-12, atol=0)
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-12, atol=0)
    torch.testing.assert_close(base.grad, br.grad, rtol=1e-12, atol=0)


def test_torch_gradcheck_of_a_maximum_update():
    op = tenet.torch_op(SOURCE, "peak")
    x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    m0 = torch.randn(4, dtype=torch.float64, requires_grad=True)

    def f(x, m0):
        m = m0 * 1.0
        result, twice = op(x, m)
        return result, twice

    assert torch.autograd.gradcheck(f, (x, m0))
