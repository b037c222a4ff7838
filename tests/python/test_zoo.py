"""Every operator of models/zoo/ that PyTorch has, as a Tenet torch op against
PyTorch: forward values and gradients (vector-Jacobian products with random
cotangents), in float64 (the programs declare float; the float64 variant runs)."""

import concurrent.futures
import os

import numpy as np
import pytest

import tenet
from tenet import sizes as symbolic
from conftest import REPO, model_source

torch = pytest.importorskip("torch")
F = torch.nn.functional

# program: (sizes, PyTorch equivalent taking the program's inputs in order)
ZOO = {
    "matmul": ({"M": 3, "K": 4, "N": 2}, torch.matmul),
    "batched_matmul": ({"B": 2, "M": 3, "K": 4, "N": 2}, torch.bmm),
    "linear_bias": ({"N": 3, "I": 4, "O": 2}, F.linear),
    "mlp_relu": ({"N": 3, "I": 4, "H": 5, "O": 2},
                 lambda x, w1, b1, w2, b2: F.linear(F.relu(F.linear(x, w1, b1)), w2, b2)),
    "conv2d_stride1": ({"B": 2, "C": 2, "H": 6, "W": 5, "O": 3, "KH": 3, "KW": 2}, F.conv2d),
    "conv2d_stride2": ({"B": 2, "C": 2, "H": 7, "W": 8, "O": 2, "KH": 3, "KW": 3},
                       lambda img, w, b: F.conv2d(img, w, b, stride=2)),
    "conv2d_padded": ({"B": 2, "C": 2, "H": 5, "W": 4, "O": 2},
                      lambda img, w, b: F.conv2d(img, w, b, padding=1)),
    "conv2d_grouped": ({"B": 2}, lambda w, x: F.conv2d(x, w, padding=1, groups=2)),
    "transposed_conv": ({"B": 2, "C": 2, "H": 3, "W": 2, "O": 2},
                        lambda img, w: F.conv_transpose2d(img, w, stride=2)),
    "maxpool2x2": ({"B": 2, "C": 2, "H": 5, "W": 6}, lambda img: F.max_pool2d(img, 2)),
    "avgpool2x2": ({"B": 2, "C": 2, "H": 4, "W": 5}, lambda img: F.avg_pool2d(img, 2)),
    "softmax": ({"N": 3, "K": 5}, lambda z: F.softmax(z, 1)),
    "log_softmax": ({"N": 3, "K": 5}, lambda z: F.log_softmax(z, 1)),
    "logsumexp": ({"N": 3, "K": 5}, lambda z: torch.logsumexp(z, 1)),
    "cross_entropy": ({"N": 4, "K": 5}, lambda z, label: F.cross_entropy(z, label.long())),
    "bce_with_logits": ({"N": 3, "K": 4}, F.binary_cross_entropy_with_logits),
    "mse": ({"N": 3, "D": 4}, F.mse_loss),
    "cosine_similarity": ({"N": 3, "D": 4}, lambda a, b: F.cosine_similarity(a, b, 1, 1e-8)),
    "layer_norm": ({"N": 3, "D": 5}, lambda x, g, b: F.layer_norm(x, x.shape[1:], g, b, 1e-5)),
    "batch_norm": ({"B": 2, "C": 3, "H": 2, "W": 3},
                   lambda img, g, b: F.batch_norm(img, None, None, g, b, True, 0.1, 1e-5)),
    "gelu_tanh": ({"N": 3, "D": 4}, lambda x: F.gelu(x, approximate="tanh")),
    "elu": ({"N": 3, "D": 4}, F.elu),
    "gru_cell": ({"B": 2, "I": 3, "H": 4},
                 lambda x, h, w_ih, w_hh, b_ih, b_hh: torch.gru_cell(
                     x, h, w_ih.flatten(0, 1), w_hh.flatten(0, 1), b_ih.flatten(),
                     b_hh.flatten())),
    "attention": ({"B": 2, "T": 3, "S": 4, "D": 5, "C": 2}, F.scaled_dot_product_attention),
    "einsum_bilinear": ({"N": 3, "I": 4, "O": 2, "J": 3}, lambda x1, w, x2: F.bilinear(x1, x2, w)),
    "capsule_transform": ({"B": 2, "I": 3, "J": 2, "E": 4, "D": 3},
                          lambda u, w: torch.einsum("ijed,bid->bije", w, u)),
    "scalar_loss": ({"N": 4, "M": 3},
                    lambda pred, target, w, lam: F.mse_loss(pred, target) + lam * (w * w).sum()),
    "flatten_linear": ({"B": 2, "O": 3}, lambda x, w, b: F.linear(x.flatten(1), w, b)),
    "scans": ({"B": 3, "N": 7}, lambda x: (
        x.cumsum(1), x.flip(1).cumsum(1).flip(1), x.cumsum(1) - x, x.cumprod(1),
        x.cummax(1).values, x.cumsum(0), F.avg_pool1d(x[:, None], 2, 2)[:, 0] * 2)),
    # w_target's gradient is 0: `0 * w_target.sum()` keeps it in PyTorch's graph.
    "detached_target": ({"N": 3, "I": 4, "O": 2},
                        lambda x, w, w_target: ((x @ w.T - torch.sign(x @ w_target.T).detach())
                                                ** 2).sum() + 0 * w_target.sum()),
}
# Compared elsewhere (test_lltm.py, test_capsnet.py, test_reshape.py) or without a PyTorch operator;
# the tc_* programs exercise Tensor Comprehensions' syntax and are checked against
# hand-computed values and by gradcheck in the C++ zoo suite (tests/zoo/).
ELSEWHERE = {"lltm", "capsnet_small", "attention_heads", "margin_loss", "masked_decoder", "routing3",
             "routing_step", "squash", "tc_bool", "tc_gather", "tc_half", "tc_index_math",
             "tc_math", "tc_product", "tc_promotion", "tc_promotion_update", "tc_redefine",
             "tc_ternary", "tc_unsigned", "tc_update_output"}


def test_every_zoo_program_is_classified():
    programs = {p.stem for p in (REPO / "models" / "zoo").glob("*.tn")}
    assert programs == set(ZOO) | ELSEWHERE


@pytest.fixture(scope="module")
def ops():
    """Every operator, with its float64 kernels compiled in parallel (the JIT releases
    the GIL while the C++ compiler runs)."""
    made = {name: tenet.torch_op(model_source(f"zoo/{name}.tn"), name) for name in ZOO}
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        list(pool.map(lambda op: op.compile(float64=True), made.values()))
    return made


def zoo_inputs(op, sizes, seed):
    """float64 inputs uniform in [-1, 1) (targets of bce in [0, 1)); integer labels
    below the class count K."""
    rng = np.random.default_rng(seed)
    values = []
    for decl in op.function.inputs:
        shape = [symbolic.evaluate(d, sizes) for d in decl.shape]
        if decl.type == "int32":
            values.append(torch.from_numpy(rng.integers(0, sizes["K"], shape).astype(np.int32)))
            continue
        low = 0.0 if (op.function.name, decl.name) == ("bce_with_logits", "y") else -1.0
        values.append(torch.from_numpy(rng.uniform(low, 1.0, shape)).requires_grad_())
    return values


@pytest.mark.parametrize("name", sorted(ZOO))
def test_forward_and_gradient_match_pytorch(ops, name):
    sizes, reference = ZOO[name]
    op = ops[name]
    inputs = zoo_inputs(op, sizes, seed=len(name))
    floats = [x for x in inputs if x.is_floating_point()]
    got = op(*inputs)
    want = reference(*inputs)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    cotangents = [torch.randn_like(w) for w in want]
    got_grads = torch.autograd.grad(got, floats, cotangents)
    want_grads = torch.autograd.grad(want, floats, cotangents)
    errors = [float((g - w).detach().abs().max())
              for g, w in zip(got + got_grads, want + want_grads)]
    print(f"{name}: max abs error forward {max(errors[:len(got)]):.2e}, "
          f"gradients {max(errors[len(got):]):.2e}")
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w.to(g.dtype), rtol=1e-10, atol=1e-12)
    for g, w in zip(got_grads, want_grads):
        torch.testing.assert_close(g, w, rtol=1e-10, atol=1e-12)
