"""reshape and stop_gradient (issue 16: what the PyTorch importer needs)
against torch.reshape / permute and detach, forward and backward, through
tenet.torch_op."""

import pytest

import tenet
from conftest import model_source

torch = pytest.importorskip("torch")

HEADS = model_source("zoo/attention_heads.tn")

STE = """
def binarise(float(B, N) h, float(N, O) w) -> (y) {
  q(b, i) = h(b, i) + stop_gradient(sign(h(b, i)) - h(b, i))
  flat = reshape(q, B * N)
  back = reshape(flat, B, N)
  y(b, o) +=! back(b, i) * w(i, o)
}
"""


def heads_reference(q, k, w):
    B, T, _ = q.shape
    qh = q.reshape(B, T, 2, 3).permute(0, 2, 1, 3)  # (B, heads, T, 3)
    kh = k.reshape(B, T, 2, 3).permute(0, 2, 1, 3)
    scores = qh @ kh.transpose(-1, -2)               # (B, heads, T, T)
    ctx = scores @ kh                                 # (B, heads, T, 3)
    merged = ctx.permute(0, 2, 1, 3).reshape(B, T, 6)
    return scores, merged, w.reshape(6, 2, 3).reshape(3, 2, 6)


def test_heads_split_permute_merge_match_torch_reshape():
    op = tenet.torch_op(HEADS, "attention_heads")
    inputs = [torch.randn(2, 3, 6, requires_grad=True), torch.randn(2, 3, 6, requires_grad=True),
              torch.randn(6, 6, requires_grad=True)]
    ref_inputs = [t.detach().clone().requires_grad_() for t in inputs]
    outs, refs = op(*inputs), heads_reference(*ref_inputs)
    cots = [torch.randn_like(r) for r in refs]
    sum((o * c).sum() for o, c in zip(outs, cots)).backward()
    sum((r * c).sum() for r, c in zip(refs, cots)).backward()
    for o, r in zip(outs, refs):
        torch.testing.assert_close(o, r, rtol=1e-5, atol=1e-5)
    for t, r in zip(inputs, ref_inputs):
        torch.testing.assert_close(t.grad, r.grad, rtol=1e-5, atol=1e-5)


def test_straight_through_estimator_matches_detach():
    op = tenet.torch_op(STE, "binarise")
    h = torch.randn(3, 4, requires_grad=True)
    w = torch.randn(4, 2, requires_grad=True)
    ref_h, ref_w = h.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    y = op(h, w)
    ref = (ref_h + (torch.sign(ref_h) - ref_h).detach()).reshape(-1).reshape(3, 4) @ ref_w
    cot = torch.randn_like(ref)
    (y * cot).sum().backward()
    (ref * cot).sum().backward()
    torch.testing.assert_close(y, ref, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(h.grad, ref_h.grad, rtol=1e-5, atol=1e-6)  # straight through
    torch.testing.assert_close(w.grad, ref_w.grad, rtol=1e-5, atol=1e-6)
