"""Reductions over dimensions: sum, mean, amax, amin (keepdim too); running sums and
products (cumsum, cumprod)."""

from . import op
from .. import names


def _converted(value, x, out):
    """``value`` (of x's dtype) in out's dtype."""
    if x.dtype == out.dtype:
        return value
    return f"{'float32' if out.dtype == 'float' else out.dtype}({value})"


def _reduce(t, x, dims, keepdim, reduction, scale=False, dtype=None, wanted=None):
    if dims is None or len(dims) == 0:
        dims = list(range(x.rank))
    dims = sorted(d % max(x.rank, 1) for d in dims)
    shape = None
    if wanted is not None:  # not the node's own value: its shape from x
        shape = tuple("1" if k in dims else s for k, s in enumerate(x.shape)) if keepdim \
            else tuple(s for k, s in enumerate(x.shape) if k not in dims)
    out = t.new(wanted, shape=shape, dtype=dtype or (x.dtype if wanted else None))
    own = names.own_indices(x.rank)
    reduced = names.reduced_indices(len(dims))
    at = list(own)
    for d, r in zip(dims, reduced):
        at[d] = r
    left = own if keepdim else [i for k, i in enumerate(own) if k not in dims]
    ranges = {i: x.shape[k] for k, i in enumerate(own) if k not in dims}
    ranges.update({r: x.shape[d] for d, r in zip(dims, reduced)})
    where = [f"{own[d]} in 0:1" for d in dims] if keepdim else []
    value = _converted(x.read(at), x, out)
    t.statement(out, left, reduction, value, [(x, at)], ranges, where)
    if scale:
        count = " * ".join(x.shape[d] for d in dims) or "1"
        count = count if len(dims) == 1 else f"({count})"
        t.statement(out, left, "=", f"{out.read(left)} / {count}")
    return out


@op("aten.sum.dim_IntList")
def sum_dims(t, x, dims=None, keepdim=False, dtype=None):
    return _reduce(t, x, dims, keepdim, "+=!")


@op("aten.sum.default")
def sum_all(t, x, dtype=None):
    return _reduce(t, x, None, False, "+=!")


@op("aten.mean.dim")
def mean_dims(t, x, dims=None, keepdim=False, dtype=None):
    return _reduce(t, x, dims, keepdim, "+=!", scale=True)


@op("aten.mean.default")
def mean_all(t, x, dtype=None):
    return _reduce(t, x, None, False, "+=!", scale=True)


@op("aten.amax.default")
def amax(t, x, dims=(), keepdim=False):
    return _extreme(t, x, dims, keepdim, "max=!")


@op("aten.amin.default")
def amin(t, x, dims=(), keepdim=False):
    return _extreme(t, x, dims, keepdim, "min=!")


def _extreme(t, x, dims, keepdim, reduction):
    """PyTorch's amax/amin: NaN where a NaN is reduced (``max=!`` ignores NaN: the NaNs
    are summed too); the gradient split evenly between ties (``max=!``'s goes to the
    first), and NaN for every element reduced with a NaN (PyTorch's 0 / 0). The value
    is the sum of x / count over the ties: exact for one or two."""
    if x.dtype != "float":
        return _reduce(t, x, dims, keepdim, reduction)
    base = t.default_name()
    dims = list(range(x.rank)) if dims is None or len(dims) == 0 else dims
    kept = dict(shape=x.shape, dtype=x.dtype)
    found = _reduce(t, x, dims, True, reduction, wanted=f"{base}_found")
    nans = t.elementwise(lambda v: f"select({v} != {v}, {v}, 0)", [x], wanted=f"{base}_nans",
                         **kept)
    nan = _reduce(t, nans, dims, True, "+=!", wanted=f"{base}_nan")
    best = t.elementwise(lambda m, n: f"stop_gradient({m} + {n})", [found, nan],
                         wanted=f"{base}_best", shape=found.shape, dtype=x.dtype)
    ties = t.elementwise(lambda v, m: f"select({v} == {m}, 1, 0)", [x, best],
                         wanted=f"{base}_ties", shape=x.shape, dtype="int32")
    count = _reduce(t, ties, dims, True, "+=!", dtype="int32", wanted=f"{base}_count")
    terms = t.elementwise(
        lambda v, m, c: f"select({v} == {m}, {v} / {c}, select({m} != {m}, {v} * {m}, 0))",
        [x, best, count], wanted=f"{base}_terms", **kept)
    return _reduce(t, terms, dims, keepdim, "+=!")


@op("aten.any.dim", "aten.any.dims", "aten.any.default")
def any_(t, x, dims=None, keepdim=False):
    count = _count(t, x, dims, keepdim)
    return t.elementwise(lambda c: f"{c} > 0", [count], dtype="bool")


@op("aten.all.dim", "aten.all.dims", "aten.all.default")
def all_(t, x, dims=None, keepdim=False):
    count = _count(t, x, dims, keepdim, negate=True)
    return t.elementwise(lambda c: f"{c} == 0", [count], dtype="bool")


def _count(t, x, dims, keepdim, negate=False):
    """How many elements are true (false with ``negate``), as an int32 tensor."""
    if isinstance(dims, int):
        dims = [dims]
    flags = t.elementwise(lambda v: f"int32({'!' if negate else ''}{v})", [x],
                          wanted=f"{t.default_name()}_flags", dtype="int32", shape=x.shape)
    return _reduce(t, flags, dims, keepdim, "+=!", dtype="int32")


@op("aten.var.correction", "aten.var.dim")
def var(t, x, dims=None, unbiased=None, keepdim=False, correction=None):
    """The mean, then the sum of squared differences over ``count - correction``."""
    if correction is None:
        correction = 1 if unbiased in (None, True) else 0
    if dims is None or len(dims) == 0:
        dims = list(range(x.rank))
    x = t.materialise(x)
    mean = _reduce(t, x, dims, True, "+=!", scale=True, wanted=f"{t.default_name()}_mean")
    idx = names.own_indices(x.rank)
    centred = t.elementwise(lambda v, m: f"({v} - {m}) * ({v} - {m})", [x, mean],
                            wanted=f"{t.default_name()}_squares", shape=x.shape, dtype=x.dtype)
    out = _reduce(t, centred, dims, keepdim, "+=!")
    count = " * ".join(x.shape[d % x.rank] for d in dims)
    left = [i for k, i in enumerate(idx) if keepdim or k not in [d % x.rank for d in dims]]
    t.statement(out, left, "=", f"{out.read(left)} / (({count}) - {correction})")
    return out


@op("aten.cumsum.default")
def cumsum(t, x, dim, dtype=None):
    return _scan(t, x, dim, "+=!")


@op("aten.cumprod.default")
def cumprod(t, x, dim, dtype=None):
    return _scan(t, x, dim, "*=!")


def _scan(t, x, dim, reduction):
    """Running sums and products along ``dim``: ``y(.., i, ..) +=! x(.., k, ..) where k in
    0:i + 1``, a triangle the CPU target runs as a scan (O(n), docs/language.md); the
    gradient of a sum is a suffix sum, scanned too; a product's is exact at zeros (the
    product rule of docs/language.md) and reduces the triangle. Integers and bools
    accumulate in the output's dtype (int64, as PyTorch promotes them)."""
    out = t.new()
    own = names.own_indices(x.rank)
    if x.rank == 0:
        t.statement(out, [], "=", _converted(x.read([]), x, out))
        return out
    dim = dim % x.rank
    (k,) = names.reduced_indices(1)
    at = list(own)
    at[dim] = k
    ranges = {i: x.shape[n] for n, i in enumerate(own)}
    t.statement(out, own, reduction, _converted(x.read(at), x, out), [(x, at)], ranges,
                [f"{k} in 0:{own[dim]} + 1"])
    return out



@op("aten.argmax.default")
def argmax(t, x, dim=None, keepdim=False):
    return _arg_extreme(t, x, dim, keepdim, "max=!")


@op("aten.argmin.default")
def argmin(t, x, dim=None, keepdim=False):
    return _arg_extreme(t, x, dim, keepdim, "min=!")


def _arg_extreme(t, x, dim, keepdim, reduction):
    """PyTorch's argmax/argmin: the first position of the extreme along ``dim`` (of the
    flattened tensor without one), and the first NaN's where there is one. One min over
    a key: a NaN's position, else a tie's position + the count, else twice the count."""
    if x.rank == 0:
        out = t.new()
        t.statement(out, [], "=", "0")
        return out
    dims = list(range(x.rank)) if dim is None else [dim % x.rank]
    base = t.default_name()
    best = _reduce(t, x, dims, True, reduction, wanted=f"{base}_best")
    own = names.own_indices(x.rank)
    reduced = names.reduced_indices(len(dims))
    at = list(own)
    for d, r in zip(dims, reduced):
        at[d] = r
    sizes = [x.shape[d] for d in dims]
    position = " + ".join(f"{r} * {'(' + ' * '.join(sizes[n + 1:]) + ')'}"
                          if n + 1 < len(sizes) else r for n, r in enumerate(reduced))
    count = "(" + " * ".join(sizes) + ")"
    kept = [own[d] if d not in dims else "0" for d in range(x.rank)]  # a reduced dim's 0
    value, extreme = x.read(at), best.read(kept)
    key = (f"select({value} != {value}, {position}, select({value} == {extreme}, "
           f"{position} + {count}, 2 * {count}))") if x.dtype == "float" else \
        f"select({value} == {extreme}, {position}, {count})"
    keyed = t.new(f"{base}_key", shape=best.shape, dtype="int64")
    ranges = {i: x.shape[k] for k, i in enumerate(own) if k not in dims}
    ranges.update({r: x.shape[d] for d, r in zip(dims, reduced)})
    t.statement(keyed, own, "min=!", key, [(x, at), (best, kept)], ranges,
                [f"{own[d]} in 0:1" for d in dims])
    out = t.new()
    left = own if keepdim else [i for k, i in enumerate(own) if k not in dims]
    got = keyed.read(kept)
    ranges = {i: x.shape[k] if k not in dims else "1" for k, i in enumerate(own)}
    t.statement(out, left, "=", f"select({got} >= {count}, {got} - {count}, {got})",
                [(keyed, kept)], {i: ranges[i] for i in left})
    return out
