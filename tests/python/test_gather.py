"""Data-dependent reads (issue 15) from Python and PyTorch: an embedding bag
as a PyTorch operator matches F.embedding_bag forward and backward (a
scatter-add gradient), ragged bags match it with offsets, an index out of
range raises tenet.BindError with the index's value, and index_checks=False
is accepted for release code."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import tenet

EMBEDDING_BAG = """
def embedding_bag(float(V, D) W, int32(B, L) tokens) -> (bag) {
  bag(b, d) +=! W(tokens(b, l), d)
}
"""

RAGGED = """
def ragged(float(V, D) W, int32(NNZ) tok, int32(B) start, int32(B) end) -> (bag) {
  bag(b, d) +=! W(tok(k), d) where k in start(b):end(b)
}
"""


def test_embedding_bag_matches_pytorch_forward_and_backward():
    op = tenet.torch_op(EMBEDDING_BAG, "embedding_bag")
    torch.manual_seed(0)
    W = torch.randn(50, 70, dtype=torch.float64, requires_grad=True)
    tokens = torch.randint(0, 50, (40, 6), dtype=torch.int32)
    bag = op(W, tokens)
    ref = F.embedding_bag(tokens.long(), W, mode="sum")
    torch.testing.assert_close(bag, ref, rtol=1e-12, atol=1e-12)
    g = torch.randn_like(bag)
    (dW,) = torch.autograd.grad(bag, W, g)
    (dW_ref,) = torch.autograd.grad(ref, W, g)
    torch.testing.assert_close(dW, dW_ref, rtol=1e-12, atol=1e-12)


def test_embedding_bag_gradcheck():
    op = tenet.torch_op(EMBEDDING_BAG, "embedding_bag")
    W = torch.randn(6, 3, dtype=torch.float64, requires_grad=True)
    tokens = torch.tensor([[0, 5, 5], [2, 2, 1]], dtype=torch.int32)
    assert torch.autograd.gradcheck(lambda w: op(w, tokens), (W,))


def test_ragged_bags_match_embedding_bag_with_offsets():
    op = tenet.torch_op(RAGGED, "ragged")
    W = torch.randn(10, 4, dtype=torch.float64, requires_grad=True)
    tok = torch.tensor([1, 2, 3, 9, 0, 4, 4], dtype=torch.int32)
    offsets = torch.tensor([0, 2, 2, 5])
    start = offsets.to(torch.int32)
    end = torch.cat([offsets[1:], torch.tensor([7])]).to(torch.int32)
    bag = op(W, tok, start, end)
    ref = F.embedding_bag(tok.long(), W, offsets, mode="sum")
    torch.testing.assert_close(bag, ref, rtol=1e-12, atol=1e-12)
    g = torch.randn_like(bag)
    torch.testing.assert_close(torch.autograd.grad(bag, W, g)[0],
                               torch.autograd.grad(ref, W, g)[0], rtol=1e-12, atol=1e-12)


def test_out_of_range_index_is_a_bind_error():
    f = tenet.compile(EMBEDDING_BAG, "embedding_bag")
    W = np.zeros((20, 3), np.float32)
    tokens = np.array([[1, 2], [57, 19]], np.int32)
    with pytest.raises(tenet.BindError, match=r"index tokens\(1, 0\) = 57 is outside \[0, 20\) "
                                              r"of W dimension 0"):
        f(W, tokens)


def test_index_checks_off_computes_the_same_in_range():
    checked = tenet.compile(EMBEDDING_BAG, "embedding_bag")
    unchecked = tenet.compile(EMBEDDING_BAG, "embedding_bag", index_checks=False)
    rng = np.random.default_rng(1)
    W = rng.standard_normal((30, 8)).astype(np.float32)
    tokens = rng.integers(0, 30, (5, 4)).astype(np.int32)
    np.testing.assert_array_equal(checked(W, tokens), unchecked(W, tokens))


def test_an_operator_made_without_index_checks_is_not_handed_out_with_them():
    # The operator cache is keyed by the options that change behaviour: the checked
    # operator made after an unchecked one for the same source still checks.
    unchecked = tenet.torch_op(EMBEDDING_BAG, "embedding_bag", index_checks=False)
    checked = tenet.torch_op(EMBEDDING_BAG, "embedding_bag")
    assert checked is not unchecked and checked.name != unchecked.name
    assert tenet.torch_op(EMBEDDING_BAG, "embedding_bag") is checked
    W = torch.zeros(20, 3)
    tokens = torch.tensor([[1, 2], [57, 19]], dtype=torch.int32)
    with pytest.raises(tenet.BindError, match=r"index tokens\(1, 0\) = 57 is outside"):
        checked(W, tokens)
    # a name chosen by the caller cannot be reused with other options either
    tenet.torch_op(EMBEDDING_BAG, "embedding_bag", name="bag_checked_once")
    with pytest.raises(ValueError, match="a different Tenet operator is already registered"):
        tenet.torch_op(EMBEDDING_BAG, "embedding_bag", name="bag_checked_once",
                       index_checks=False)


def test_index_arithmetic_beyond_int64_is_an_error_not_a_wrapped_read():
    f = tenet.compile("""
def scaled(float(V) W, int64(B) I, int64(1) K) -> (O) {
  O(b) = W(I(b) * K(0) + 1)
}
""")
    W = np.arange(6, dtype=np.float32)
    with pytest.raises(tenet.BindError, match=r"the index I\(1\)\*K\(0\) \+ 1 of W dimension 0 "
                                              r"overflows 64-bit integers \(4 \* 4611686018427387904\)"):
        f(W, np.array([0, 4], np.int64), np.array([1 << 62], np.int64))
    np.testing.assert_array_equal(f(W, np.array([0, 4], np.int64), np.array([1], np.int64)),
                                  [1, 5])
