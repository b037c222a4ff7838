"""Functions compiled for their sizes (Function.specialised, ir/specialise.h) and the
imported module that compiles the sizes of its first call in (Program.module)."""

import numpy as np
import pytest

import tenet
from conftest import model_source

torch = pytest.importorskip("torch")

SQUASH = model_source("zoo/squash.tn")
CONV = model_source("zoo/conv2d_padded.tn")


def test_a_specialised_function_computes_what_the_general_one_does():
    general = tenet.compile(CONV, "conv2d_padded")
    special = general.specialised({"B": 2, "H": 5})
    assert special.static_sizes == {"B": 2, "H": 5}
    assert special.size_params == ["C", "W", "O"]
    assert [str(d) for d in special.inputs[0].shape] == ["2", "C", "5", "W"]
    assert special.key != general.key
    rng = np.random.default_rng(0)
    img = rng.standard_normal((2, 3, 5, 4))
    w = rng.standard_normal((6, 3, 3, 3))
    bias = rng.standard_normal(6)
    np.testing.assert_allclose(special(img, w, bias), general(img, w, bias), rtol=1e-12)
    # gradients derived from it keep the sizes, and agree with the general ones
    vjp = special.vjp()
    assert vjp.static_sizes == {"B": 2, "H": 5}
    cot = rng.standard_normal((2, 6, 5, 4))
    for a, b in zip(vjp(img, w, bias, cot), general.vjp()(img, w, bias, cot)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    # compile(..., static_sizes=) is the same function
    assert tenet.compile(CONV, static_sizes={"B": 2, "H": 5}).key == special.key


def test_a_specialised_function_refuses_other_sizes_and_unknown_names():
    special = tenet.compile(SQUASH, "squash").specialised({"B": 2})
    with pytest.raises(tenet.BindError, match="expected float32"):
        special(np.zeros((3, 4, 5), np.float32))
    with pytest.raises(ValueError, match="has no size parameter 'Q'"):
        tenet.compile(SQUASH, "squash").specialised({"Q": 2})
    with pytest.raises(TypeError, match="must be an integer"):
        tenet.compile(SQUASH, "squash").specialised({"B": 2.0})


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(8 * 6 * 6, 5)).double()


def _step(module, x):
    for p in module.parameters():
        p.grad = None
    y = module(x)
    (y * torch.arange(5.0, dtype=torch.float64)).sum().backward()
    return y.detach(), [p.grad.clone() for p in module.parameters()]


def test_the_module_compiles_its_first_calls_sizes_in_and_runs_others_generally():
    import copy
    x2 = torch.randn(2, 3, 6, 6, dtype=torch.float64)
    x3 = torch.randn(3, 3, 6, 6, dtype=torch.float64)
    eager = _model()
    program = tenet.from_torch(copy.deepcopy(eager), (x2,))
    module = program.module()
    for x in (x2, x3, x2):
        y, grads = _step(module, x)
        y_ref, grads_ref = _step(eager, x)
        torch.testing.assert_close(y, y_ref)
        for g, g_ref in zip(grads, grads_ref):
            torch.testing.assert_close(g, g_ref)
    # the running statistics were updated three times on both sides
    torch.testing.assert_close(module.state_dict()["1.running_mean"],
                               eager.state_dict()["1.running_mean"])
    keys = set(module._ops)
    assert (True, "cpu", (("B", 2),)) in keys  # the first call's batch, compiled in
    assert (True, "cpu") in keys                # batch 3: the general build
    assert module._ops[(True, "cpu", (("B", 2),))].function.static_sizes == {"B": 2}
    # and without specialising, only the general build
    plain = program.module(specialise=False)
    plain(x2)
    assert all(len(key) == 2 for key in plain._ops)
