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


UPDATE = """
def scale(float(N) x) -> (float(N) y) {
  y(n) *= x(n) * 2.0
}
"""


def test_emulated_torch_tensors_run_on_the_device_path():
    """CPU tensors are the emulator's device memory: they take the device-resident entry
    point (outputs and workspace allocated by PyTorch, nothing copied), as CUDA tensors
    do with target="cuda", and agree with the CPU target; an updated input is written."""
    torch = pytest.importorskip("torch")
    z = torch.from_numpy(rng_array((37, 300)))
    f = tenet.compile(SOFTMAX, target="cuda-emulated")
    assert f.kernel().runs_on_device
    p = f(z)
    assert isinstance(p, torch.Tensor) and p.dtype == torch.float32 and p.shape == (37, 300)
    torch.testing.assert_close(p, tenet.compile(SOFTMAX)(z), rtol=1e-6, atol=1e-7)
    # float64 tensors run the float64 variant, on the device path too
    p64 = f(z.double())
    assert p64.dtype == torch.float64
    torch.testing.assert_close(p64, torch.softmax(z.double(), 1), rtol=1e-12, atol=1e-15)
    x, y = torch.arange(1.0, 5.0), torch.ones(4)
    out = tenet.compile(UPDATE, target="cuda-emulated")(x, y)
    assert out is y
    torch.testing.assert_close(y, 2 * torch.arange(1.0, 5.0))


def test_emulated_torch_op_autograd_on_the_device_path():
    torch = pytest.importorskip("torch")
    op = tenet.torch_op(LINEAR, target="cuda-emulated", name="linear_emulated_device")
    x, w, b = (torch.from_numpy(rng_array(s, k)).double().requires_grad_()
               for k, s in enumerate([(6, 5), (4, 5), (4,)]))
    loss = op(x, w, b)
    loss.backward()
    want = (((x @ w.T) + b) ** 2).sum()
    grads = torch.autograd.grad(want, (x, w, b))
    torch.testing.assert_close(loss, want)
    for got, expected in zip((x.grad, w.grad, b.grad), grads):
        torch.testing.assert_close(got, expected)
    assert torch.autograd.gradcheck(op, (x, w, b))


def test_device_binding_errors_name_the_argument():
    """Shapes that do not fit reach the device entry's binding (ir::bind_shapes), which
    names the input with the expected and actual shapes as the host path does."""
    torch = pytest.importorskip("torch")
    f = tenet.compile(LINEAR, target="cuda-emulated")
    x, w, bias = torch.ones(6, 5), torch.ones(4, 6), torch.ones(4)
    with pytest.raises(ValueError, match=r"input 'w': expected float32\[O, I\] = \[4, 5\], "
                                         r"got float32\[4, 6\]"):
        f(x, w, bias)
    with pytest.raises(TypeError, match="expected a CPU tensor, got device meta"):
        tenet.compile(SOFTMAX)(torch.empty((2, 3), device="meta"))


@pytest.mark.parametrize("name", ["mlp", "mnist_cnn", "conv_bn", "transformer"])
def test_imported_module_on_the_emulated_gpu_trains_as_pytorch(name):
    """Program.module(target="cuda-emulated"): an imported model's training step (forward,
    backward, BatchNorm's buffers, three SGD steps) on the CUDA target's kernels through
    the device path, against PyTorch in float64, as the CPU target is checked."""
    pytest.importorskip("torch")
    import import_models
    model, args = __import__("test_import_models").MODELS[name]()
    import_models.check(model, args, target="cuda-emulated")


def test_cuda_target_takes_cuda_tensors_or_says_why_not():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no GPU here: the device path runs on the emulator above "
                    "(scripts/gpu-check.sh runs this on a GPU)")
    z = torch.from_numpy(rng_array((37, 300))).cuda()
    p = tenet.compile(SOFTMAX, target="cuda")(z)
    assert p.device == z.device
    torch.testing.assert_close(p.cpu(), torch.softmax(z.cpu(), 1), rtol=1e-5, atol=1e-7)
    with pytest.raises(TypeError, match="one device"):
        tenet.compile(LINEAR, target="cuda")(z[:, :5], torch.ones(4, 5), torch.ones(4))
    with pytest.raises(TypeError, match="compile with target='cuda'"):
        tenet.compile(SOFTMAX)(z)
    # an imported module moved to the GPU compiles for it
    import import_models
    model, args = __import__("test_import_models").MODELS["mnist_cnn"]()
    program = tenet.from_torch(model, args)
    module = program.module().cuda()
    got = module(*(a.cuda() for a in args))
    torch.testing.assert_close(got.cpu(), model(*args), rtol=1e-4, atol=1e-5)


def test_unknown_target_lists_the_targets():
    with pytest.raises(ValueError, match="unknown target 'gpu'.*'cuda-emulated'"):
        tenet.compile(SOFTMAX, target="gpu")


@pytest.mark.parametrize("name", sorted(__import__("test_import_models").MODELS))
def test_imported_models_kernels_compile_with_nvrtc(name):
    """Tier T0 for imported models (docs/cuda.md): the vector-Jacobian program of every
    model of test_import_models in training mode (its forward and its backward), printed by the
    cuda target, compiles with NVRTC for sm_90 within the budgets of
    tests/cuda/nvrtc_zoo_test.cpp."""
    torch = pytest.importorskip("torch")
    from tenet import _tenet
    from tenet.function import grad_request, load

    torch.manual_seed(0)
    model, args = __import__("test_import_models").MODELS[name]()
    program = tenet.from_torch(model, args)
    checked = load(program.source, "model.tn")
    entry = program.entry(True)
    variant = _tenet.Variant(entry, grad=grad_request(None, None, vjp=True))
    try:
        report = _tenet.cuda_kernel_report(checked, variant, "sm_90")
    except RuntimeError as e:  # no CUDA toolkit here
        pytest.skip(str(e))
    assert report["kernels"] > 0
    assert report["max_spill_bytes"] <= 64, report
    # only grouped reductions use shared memory: 32 warp values of up to 8 bytes
    assert report["max_shared_bytes"] <= 32 * 8, report
    assert report["max_registers"] * 256 <= 65536, report
