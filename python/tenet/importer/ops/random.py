"""Randomness: dropout's mask and Bernoulli draws (stochastic depth, dropout written
as ``empty`` + ``bernoulli_``) are inputs of the program, drawn by the module before each
call as PyTorch draws them (dropout: Bernoulli(1 - p) scaled by 1 / (1 - p), in the
input's dtype), so the program is deterministic and its gradient treats them as
constants."""

from . import op
from ..values import Tensor, literal


@op("aten.native_dropout.default")
def native_dropout(t, x, p, train):
    if not train or p == 0:
        return (x, None)
    if p == 1:  # PyTorch multiplies by 0 (the mask's 1 / (1 - p) would be NaN)
        return (t.elementwise(lambda v: f"{v} * 0", [x]), None)
    mask = t.add_input(f"{t.default_name()}_mask", x.shape, "float", "dropout", extra=p)
    out = t.elementwise(lambda v, m: f"{v} * {m}", [x, mask])
    return (out, None)


@op("aten.empty.memory_format", "aten.empty_permuted.default", "aten.empty_strided.default",
    "aten.empty_like.default")
def empty(t, *args, **kwargs):
    """A fresh tensor whose values PyTorch leaves unspecified (how export writes the
    buffer that ``bernoulli_`` then fills, for dropout and stochastic depth): NaN
    everywhere, so a read of what PyTorch never set shows instead of passing for data."""
    return Tensor("", t.shape(), t.dtype(), literal=literal(float("nan")))


@op("aten.bernoulli.p")
def bernoulli(t, x, p=0.5, generator=None):
    """A Bernoulli(p) draw of x's shape (its values unread): an input of the program that
    the module draws before each call as PyTorch does (``torch.empty(shape).bernoulli_(p)``),
    so the program stays deterministic and its gradient treats the draw as a constant."""
    if generator is not None:
        t.fail("bernoulli with a generator is not supported")
    if not 0 <= p <= 1:
        t.fail(f"bernoulli with probability {p} (not in [0, 1])")
    return t.add_input(f"{t.default_name()}_draw", x.shape, t.dtype(), "bernoulli", extra=p)
