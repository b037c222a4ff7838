"""Running extremes and running log-sum-exp along a dimension: cummax, cummin and
logcumsumexp. The running maximum (minimum) is a scan (O(n), docs/language.md,
"Triangles and scans"); the position that holds it and the log-sum-exp shifted by it
read the running value inside their sums, so they are triangles (O(n^2) comparisons
along the dimension, as sort's ranks). Values are read through the picked positions (a
gather, whose gradient is a scatter), as in PyTorch."""

from . import op
from .. import names
from ..values import literal

_INF, _MINUS_INF = literal(float("inf")), literal(float("-inf"))


@op("aten.cummax.default")
def cummax(t, x, dim):
    return _running_extreme(t, x, dim, "max=!")


@op("aten.cummin.default")
def cummin(t, x, dim):
    return _running_extreme(t, x, dim, "min=!")


def _running_extreme(t, x, dim, reduction):
    """PyTorch's order: an element equal to the running extreme takes its place (the
    last of ties), a NaN takes it always and keeps it (the last NaN so far)."""
    base = t.default_name()
    if x.rank == 0:
        values = t.new(f"{base}_values", shape=(), dtype=x.dtype)
        t.statement(values, [], "=", x.read([]))
        picked = t.new(f"{base}_indices", shape=(), dtype="int64")
        t.statement(picked, [], "=", "0")
        return values, picked
    dim, own, k, at, ranges, prefix = _prefixes(x, dim)
    value = x.read(at) if x.dtype != "bool" else f"int32({x.read(at)})"
    # the running extreme of the numbers (max=! and min=! skip NaN), a scan
    best = t.new(f"{base}_best", shape=x.shape,
                 dtype=x.dtype if x.dtype != "bool" else "int32")
    t.statement(best, own, reduction, value, [(x, at)], ranges, prefix)
    # the last position holding it, or the last NaN: max over k of a key
    n = x.shape[dim]
    at_best = best.read(own)
    if x.dtype == "float":
        key = (f"select({value} != {value}, {k} + 2 * {n}, "
               f"select({value} == {at_best}, {k} + {n}, 0))")
    else:
        key = f"select({value} == {at_best}, {k} + {n}, 0)"
    keyed = t.new(f"{base}_key", shape=x.shape, dtype="int64")
    t.statement(keyed, own, "max=!", key, [(x, at), (best, own)], ranges, prefix)
    picked = t.new(f"{base}_indices", shape=x.shape, dtype="int64")
    got = keyed.read(own)
    t.statement(picked, own, "=", f"select({got} >= 2 * {n}, {got} - 2 * {n}, {got} - {n})",
                [(keyed, own)], ranges)
    values = t.new(f"{base}_values", shape=x.shape, dtype=x.dtype)
    gather = list(own)
    gather[dim] = picked.read(own)
    t.statement(values, own, "=", x.read(gather), [(picked, own)], ranges)
    return values, picked


def _prefixes(x, dim):
    """What a statement over x's prefixes along ``dim`` needs: the dimension, x's own
    indices, the reduced index k, x read at k along ``dim``, the ranges of the own
    indices and the where clause ``k in 0:i + 1``."""
    dim = dim % x.rank
    own = names.own_indices(x.rank)
    (k,) = names.reduced_indices(1)
    at = list(own)
    at[dim] = k
    ranges = {i: s for i, s in zip(own, x.shape)}
    return dim, own, k, at, ranges, [f"{k} in 0:{own[dim]} + 1"]


@op("aten.logcumsumexp.default")
def logcumsumexp(t, x, dim):
    """log(sum over k <= i of exp(x_k)), shifted by the running maximum m_i for range:
    m_i + log(sum exp(x_k - m_i)); an infinite m_i shifts by 0 (all -inf so far gives
    -inf, an inf gives inf), and a NaN so far gives NaN, as PyTorch."""
    base = t.default_name()
    if x.rank == 0:
        out = t.new(shape=(), dtype=x.dtype)
        t.statement(out, [], "=", x.read([]))
        return out
    dim, own, k, at, ranges, prefix = _prefixes(x, dim)
    best = t.new(f"{base}_max", shape=x.shape, dtype=x.dtype)
    t.statement(best, own, "max=!", x.read(at), [(x, at)], ranges, prefix)
    shift = t.new(f"{base}_shift", shape=x.shape, dtype=x.dtype)
    m = best.read(own)
    # no gradient through the shift: the result does not depend on it
    t.statement(shift, own, "=",
                f"stop_gradient(select({m} == {_INF} || {m} == {_MINUS_INF}, 0, {m}))",
                [(best, own)], ranges)
    total = t.new(f"{base}_sum", shape=x.shape, dtype=x.dtype)
    t.statement(total, own, "+=!", f"exp({x.read(at)} - {shift.read(own)})",
                [(x, at), (shift, own)], ranges, prefix)
    out = t.new(shape=x.shape, dtype=x.dtype)
    t.statement(out, own, "=", f"{shift.read(own)} + log({total.read(own)})",
                [(shift, own), (total, own)], ranges)
    return out
