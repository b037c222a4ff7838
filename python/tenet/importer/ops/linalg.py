"""Matrix products: mm, addmm (nn.Linear), bmm, and the dot products they reduce over."""

from . import op
from .. import names
from ..values import broadcast_indices


def _product(t, a, b, batch=0, wanted=None):
    """out(..., i, j) +=! a(..., i, r) * b(..., r, j) over ``batch`` leading dimensions."""
    out = t.new(wanted)
    idx = names.own_indices(out.rank)
    (r,) = names.reduced_indices(1)
    lead = idx[:batch]
    at_a, at_b = lead + [idx[batch], r], lead + [r, idx[batch + 1]]
    t.statement(out, idx, "+=!", f"{a.read(at_a)} * {b.read(at_b)}",
                [(a, at_a), (b, at_b)], {**dict(zip(idx, out.shape)), r: a.shape[-1]})
    return out


@op("aten.mm.default")
def mm(t, a, b):
    return _product(t, a, b)


@op("aten.bmm.default")
def bmm(t, a, b):
    return _product(t, a, b, batch=1)


@op("aten.addmm.default")
def addmm(t, bias, a, b, beta=1, alpha=1):
    out = _product(t, a, b)
    idx = names.own_indices(2)
    at = broadcast_indices(bias, out.shape, idx)
    product = out.read(idx) if alpha == 1 else f"{alpha!r} * {out.read(idx)}"
    term = bias.read(at) if beta == 1 else f"{beta!r} * {bias.read(at)}"
    t.statement(out, idx, "=", f"{product} + {term}")
    return out
