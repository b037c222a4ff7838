"""Sorting: sort and topk along a dimension, by ranks. Each element's rank is the
number of elements that go before it (O(n^2) comparisons along the dimension, n the
dimension's size); the position p of the result reads the element of rank p, a gather
whose gradient is a scatter. PyTorch's order: stable (ties keep their order), NaN
greater than every number (last ascending, first descending)."""

from . import op
from .. import names


@op("aten.sort.default", "aten.sort.stable")
def sort(t, x, dim=-1, descending=False, stable=None):
    """Stable whatever ``stable`` says (PyTorch's order of ties is unspecified without)."""
    return _pick(t, x, dim % x.rank if x.rank else 0, bool(descending),
                 x.shape[dim % x.rank] if x.rank else "1")


@op("aten.topk.default")
def topk(t, x, k, dim=-1, largest=True, sorted=True):
    """The k largest (smallest) in order, whatever ``sorted`` says (PyTorch's order for
    sorted=False is unspecified)."""
    return _pick(t, x, dim % x.rank if x.rank else 0, bool(largest), str(k))


def _pick(t, x, dim, descending, count):
    base = t.default_name()
    indices_type = "int64"
    if x.rank == 0:
        values = t.new(f"{base}_values", shape=(), dtype=x.dtype)
        t.statement(values, [], "=", x.read([]))
        picked = t.new(f"{base}_indices", shape=(), dtype=indices_type)
        t.statement(picked, [], "=", "0")
        return values, picked
    own = names.own_indices(x.rank)
    (k,) = names.reduced_indices(1)
    at_k = list(own)
    at_k[dim] = k
    a, b = x.read(at_k), x.read(own)  # another element and this one
    if x.dtype == "float":
        nan_a, nan_b = f"{a} != {a}", f"{b} != {b}"
        first = (f"({a} > {b} || ({nan_a} && !({nan_b})))" if descending
                 else f"({a} < {b} || ({nan_b} && !({nan_a})))")
        tie = f"({a} == {b} || ({nan_a} && {nan_b}))"
    else:
        first = f"({a} > {b})" if descending else f"({a} < {b})"
        tie = f"({a} == {b})"
    ranks = t.new(f"{base}_rank", shape=x.shape, dtype=indices_type)
    ranges = {i: s for i, s in zip(own, x.shape)}
    ranges[k] = x.shape[dim]
    t.statement(ranks, own, "+=!", f"select({first} || ({tie} && {k} < {own[dim]}), 1, 0)",
                [(x, at_k), (x, own)], ranges)
    # the element of rank p: its index along dim (one term of the sum is not 0)
    shape = tuple(count if d == dim else s for d, s in enumerate(x.shape))
    picked = t.new(f"{base}_indices", shape=shape, dtype=indices_type)
    ranges = {i: s for i, s in zip(own, shape)}
    ranges[k] = x.shape[dim]
    t.statement(picked, own, "+=!", f"select({ranks.read(at_k)} == {own[dim]}, {k}, 0)",
                [(ranks, at_k)], ranges)
    values = t.new(f"{base}_values", shape=shape, dtype=x.dtype)
    at = list(own)
    at[dim] = picked.read(own)
    t.statement(values, own, "=", x.read(at), [(picked, own)], dict(zip(own, shape)))
    return values, picked
