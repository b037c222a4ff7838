"""tenet.compile(..., target=...) for the GPU targets (docs/cuda.md): "cuda-emulated" runs the
CUDA target's kernels on the CPU and must agree with the CPU target; "cuda" runs them on a GPU,
or says why it cannot and which target can."""

import numpy as np
import pytest

import tenet

SOFTMAX = """
def softmax(float(N, K) z) -> (p) {
  m(n) max=! z(n, k)
  e(n, k) = exp(z(n, k) - m(n))
  total(n) +=! e(n, k)
  p(n, k) = e(n, k) / total(n)
}
"""

LINEAR = """
def linear(float(B, I) x, float(O, I) w, float(O) bias) -> (loss) {
  y(b, o) +=! x(b, i) * w(o, i)
  loss +=! (y(b, o) + bias(o)) * (y(b, o) + bias(o))
}
"""


def rng_array(shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


def test_emulated_forward_matches_the_cpu():
    z = rng_array((37, 300))
    cpu = tenet.compile(SOFTMAX)(z)
    emulated = tenet.compile(SOFTMAX, target="cuda-emulated")(z)
    np.testing.assert_allclose(emulated, cpu, rtol=1e-6, atol=1e-7)


def test_emulated_gradients_match_the_cpu():
    x, w, bias = rng_array((64, 96), 1), rng_array((80, 96), 2), rng_array((80,), 3)
    cpu = tenet.compile(LINEAR).grad()(x, w, bias)
    emulated = tenet.compile(LINEAR, target="cuda-emulated").grad()(x, w, bias)
    assert len(cpu) == len(emulated)
    for got, want in zip(emulated, cpu):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def test_cuda_runs_or_says_why_not():
    z = rng_array((4, 5))
    try:
        p = tenet.compile(SOFTMAX, target="cuda")(z)
    except RuntimeError as e:  # no GPU, driver or CUDA runtime here
        assert "cuda-emulated" in str(e)
        return
    np.testing.assert_allclose(p, tenet.compile(SOFTMAX)(z), rtol=1e-5, atol=1e-7)


def test_unknown_target_lists_the_targets():
    with pytest.raises(ValueError, match="unknown target 'gpu'.*'cuda-emulated'"):
        tenet.compile(SOFTMAX, target="gpu")
