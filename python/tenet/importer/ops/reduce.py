"""Reductions over dimensions: sum, mean, amax, amin (keepdim too)."""

from . import op
from .. import names


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
    value = x.read(at)
    if x.dtype == "bool" or (x.dtype != out.dtype and out.dtype != "float"):
        value = f"{out.dtype}({value})"
    elif x.dtype != out.dtype:
        value = f"float32({value})"
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
