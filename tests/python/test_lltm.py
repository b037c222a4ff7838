"""The LLTM cell of models/zoo/lltm.tn against the Python LLTM of PyTorch's C++
extension tutorial ("Custom C++ and CUDA Extensions"): same weights, same inputs,
forward values and every gradient."""

import math

import pytest

import tenet
from conftest import model_source

torch = pytest.importorskip("torch")
F = torch.nn.functional

BATCH, INPUT, STATE = 16, 32, 128  # the tutorial's sizes


class LLTM(torch.nn.Module):
    """The tutorial's pure-PyTorch LLTM, as written there."""

    def __init__(self, input_features, state_size):
        super().__init__()
        self.input_features = input_features
        self.state_size = state_size
        # 3 * state_size for input gate, output gate and candidate cell gate.
        # input_features + state_size because we will multiply with [input, h].
        self.weights = torch.nn.Parameter(
            torch.empty(3 * state_size, input_features + state_size))
        self.bias = torch.nn.Parameter(torch.empty(3 * state_size))
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.state_size)
        for weight in self.parameters():
            weight.data.uniform_(-stdv, +stdv)

    def forward(self, input, state):
        old_h, old_cell = state
        X = torch.cat([old_h, input], dim=1)
        gate_weights = F.linear(X, self.weights, self.bias)
        gates = gate_weights.chunk(3, dim=1)
        input_gate = torch.sigmoid(gates[0])
        output_gate = torch.sigmoid(gates[1])
        candidate_cell = F.elu(gates[2])
        new_cell = old_cell + candidate_cell * input_gate
        new_h = torch.tanh(new_cell) * output_gate
        return new_h, new_cell


@pytest.fixture(scope="module")
def lltm_op():
    return tenet.torch_op(model_source("zoo/lltm.tn"), "lltm")


def run_both(lltm_op, dtype):
    torch.manual_seed(0)
    reference = LLTM(INPUT, STATE).to(dtype)
    x = torch.randn(BATCH, INPUT, dtype=dtype, requires_grad=True)
    h = torch.randn(BATCH, STATE, dtype=dtype, requires_grad=True)
    c = torch.randn(BATCH, STATE, dtype=dtype, requires_grad=True)
    weights = reference.weights.detach().clone().requires_grad_()
    bias = reference.bias.detach().clone().requires_grad_()
    leaves = (x, h, c)
    got = lltm_op(x, h, c, weights, bias)
    want = reference(x, (h, c))
    cotangents = [torch.randn_like(w) for w in want]
    got_grads = torch.autograd.grad(got, leaves + (weights, bias), cotangents)
    want_grads = torch.autograd.grad(want, leaves + (reference.weights, reference.bias),
                                     cotangents)
    names = ["new_h", "new_c", "d_x", "d_h", "d_cell", "d_weights", "d_bias"]
    return names, list(got) + list(got_grads), list(want) + list(want_grads)


@pytest.mark.parametrize("dtype, rtol, atol", [(torch.float32, 1e-5, 1e-5),
                                               (torch.float64, 1e-12, 1e-12)])
def test_lltm_matches_the_tutorial(lltm_op, dtype, rtol, atol):
    names, got, want = run_both(lltm_op, dtype)
    for name, g, w in zip(names, got, want):
        g, w = g.detach(), w.detach()
        print(f"lltm {str(dtype)[6:]} {name}: max abs error {float((g - w).abs().max()):.2e} "
              f"(max |value| {float(w.abs().max()):.2e})")
        torch.testing.assert_close(g, w, rtol=rtol, atol=atol, msg=lambda m, n=name: f"{n}: {m}")


def test_lltm_torch_gradcheck(lltm_op):
    torch.manual_seed(1)
    args = [torch.randn(2, 3, dtype=torch.float64, requires_grad=True),
            torch.randn(2, 4, dtype=torch.float64, requires_grad=True),
            torch.randn(2, 4, dtype=torch.float64, requires_grad=True),
            torch.randn(12, 7, dtype=torch.float64, requires_grad=True),
            torch.randn(12, dtype=torch.float64, requires_grad=True)]
    assert torch.autograd.gradcheck(lltm_op, args)
