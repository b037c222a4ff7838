"""Softmax, log-softmax, layer norm and batch norm (training, with the running
statistics PyTorch updates, and evaluation)."""

from . import op
from .. import names


def _dim(rank, dim):
    return dim % rank


def _reduce_over(t, x, dims, reduction, formula, wanted, keep=False):
    """A new tensor ``wanted(kept indices) reduction formula(read of x)``, reducing ``dims``
    of ``x``; with ``keep``, indexed by all of x's indices with the reduced ones absent."""
    idx = names.own_indices(x.rank)
    reduced = names.reduced_indices(len(dims))
    at = list(idx)
    for d, r in zip(dims, reduced):
        at[d] = r
    kept = [i for k, i in enumerate(idx) if k not in dims]
    shape = tuple(s for k, s in enumerate(x.shape) if k not in dims)
    out = t.new(wanted, shape=shape, dtype=x.dtype)
    ranges = {i: x.shape[k] for k, i in enumerate(idx) if k not in dims}
    ranges.update({r: x.shape[d] for d, r in zip(dims, reduced)})
    t.statement(out, kept, reduction, formula(x.read(at)), [(x, at)], ranges)
    return out, kept


def _read_kept(tensor, kept_names, indices):
    return tensor.read([i for i in indices if i in kept_names]) if kept_names else tensor.read([])


def _softmax_parts(t, x, dim, base):
    dim = _dim(x.rank, dim)
    x = t.materialise(x)
    idx = names.own_indices(x.rank)
    m, kept = _reduce_over(t, x, [dim], "max=!", lambda v: v, f"{base}_max")
    e = t.new(f"{base}_exp", shape=x.shape, dtype=x.dtype)
    t.statement(e, idx, "=", f"exp({x.read(idx)} - {_read_kept(m, kept, idx)})")
    total, _ = _reduce_over(t, e, [dim], "+=!", lambda v: v, f"{base}_sum")
    return x, m, e, total, kept, idx


@op("aten._softmax.default")
def softmax(t, x, dim, half_to_float=False):
    x, m, e, total, kept, idx = _softmax_parts(t, x, dim, t.default_name())
    out = t.new()
    t.statement(out, idx, "=", f"{e.read(idx)} / {_read_kept(total, kept, idx)}")
    return out


@op("aten._log_softmax.default")
def log_softmax(t, x, dim, half_to_float=False):
    x, m, e, total, kept, idx = _softmax_parts(t, x, dim, t.default_name())
    out = t.new()
    t.statement(out, idx, "=", f"{x.read(idx)} - {_read_kept(m, kept, idx)} - "
                               f"log({_read_kept(total, kept, idx)})")
    return out


def _moments(t, x, dims, base):
    """mean and biased variance of x over ``dims`` (PyTorch's two-pass formulas)."""
    x = t.materialise(x)
    count = " * ".join(x.shape[d] for d in dims)
    count = count if len(dims) == 1 else f"({count})"
    idx = names.own_indices(x.rank)
    mean, kept = _reduce_over(t, x, dims, "+=!", lambda v: v, f"{base}_mean")
    kept_idx = [i for i in idx if i in kept]
    t.statement(mean, kept_idx, "=", f"{mean.read(kept_idx)} / {count}")
    centred = lambda v: f"({v} - {_read_kept(mean, kept, idx)})"  # noqa: E731
    var, _ = _reduce_over(t, x, dims, "+=!", lambda v: f"{centred(v)} * {centred(v)}",
                          f"{base}_var")
    t.statement(var, kept_idx, "=", f"{var.read(kept_idx)} / {count}")
    return x, mean, var, kept, idx, count


def _normalise(t, x, mean, var, kept, idx, eps, weight, bias, param_dims):
    out = t.new(shape=x.shape, dtype=x.dtype)
    value = (f"({x.read(idx)} - {_read_kept(mean, kept, idx)}) * "
             f"rsqrt({_read_kept(var, kept, idx)} + {eps!r})")
    param_at = [idx[d] for d in param_dims]
    if weight is not None:
        value += f" * {weight.read(param_at)}"
    if bias is not None:
        value += f" + {bias.read(param_at)}"
    t.statement(out, idx, "=", value)
    return out


@op("aten.native_layer_norm.default")
def layer_norm(t, x, normalized_shape, weight, bias, eps):
    dims = list(range(x.rank - len(normalized_shape), x.rank))
    base = t.default_name()
    x, mean, var, kept, idx, _ = _moments(t, x, dims, base)
    out = _normalise(t, x, mean, var, kept, idx, eps, weight, bias, dims)
    return (out, None, None)


@op("aten._native_batch_norm_legit_functional.default", "aten._native_batch_norm_legit.default",
    "aten.native_batch_norm.default")
def batch_norm(t, x, weight, bias, running_mean, running_var, training, momentum, eps):
    if not training:
        return batch_norm_eval(t, x, weight, bias, running_mean, running_var, momentum, eps)
    dims = [0] + list(range(2, x.rank))
    base = t.default_name()
    x, mean, var, kept, idx, count = _moments(t, x, dims, base)
    _check_values_per_channel(t, var, kept, count, base)
    out = _normalise(t, x, mean, var, kept, idx, eps, weight, bias, [1])
    new_mean = new_var = None
    if running_mean is not None:
        (c,) = names.own_indices(1)
        new_mean = t.new(f"{base}_running_mean_new", shape=running_mean.shape, dtype=x.dtype)
        t.statement(new_mean, [c], "=", f"{momentum!r} * {mean.read([c])} + "
                                        f"{1 - momentum!r} * {running_mean.read([c])}")
        new_var = t.new(f"{base}_running_var_new", shape=running_var.shape, dtype=x.dtype)
        unbiased = f"{var.read([c])} * {count} / ({count} - 1)"
        t.statement(new_var, [c], "=", f"{momentum!r} * {unbiased} + "
                                       f"{1 - momentum!r} * {running_var.read([c])}")
    return (out, None, None, new_mean, new_var)


def _check_values_per_channel(t, var, kept, count, base):
    """PyTorch refuses to train a batch norm on one value per channel (the batch times
    the spatial size), whose variance is 0 and running variance NaN: at import when
    that count is fixed, else at run time, where ``var`` reads a one-element tensor at
    index ``count <= 1``, an index out of range that names this check."""
    sizes = count.strip("()").split(" * ")
    if all(s.isdigit() for s in sizes):
        if eval(count) <= 1:  # noqa: S307 (digits and '*')
            t.fail("batch norm in training mode needs more than 1 value per channel (the "
                   "batch size times the spatial size is 1), as in PyTorch: train on a "
                   "larger batch, or import in evaluation mode")
        return
    check = t.new(f"{base}_needs_more_than_1_value_per_channel", shape=("1",), dtype="int64")
    (z,) = names.own_indices(1)
    t.statement(check, [z], "=", f"int64({z})", [], {z: "1"})
    guard = check.read([f"select({count} > 1, 0, 1)"])
    t.statement(var, kept, "=", f"select({guard} == 0, {var.read(kept)}, {var.read(kept)})")


@op("aten._native_batch_norm_legit_no_training.default")
def batch_norm_eval(t, x, weight, bias, running_mean, running_var, momentum, eps):
    idx = names.own_indices(x.rank)
    out = t.new(shape=x.shape, dtype=x.dtype)
    value = (f"({x.read(idx)} - {running_mean.read([idx[1]])}) * "
             f"rsqrt({running_var.read([idx[1]])} + {eps!r})")
    if weight is not None:
        value += f" * {weight.read([idx[1]])}"
    if bias is not None:
        value += f" + {bias.read([idx[1]])}"
    t.statement(out, idx, "=", value, [(x, idx)], dict(zip(idx, x.shape)))
    return (out, None, None)


@op("aten.native_group_norm.default")
def group_norm(t, x, weight, bias, batch, channels, spatial, groups, eps):
    """Statistics per (example, group) over the group's channels and every position; each
    channel j reads its group's at the computed index j / (channels per group)."""
    x = t.materialise(x)
    per_group = int(x.shape[1]) // groups
    base = t.default_name()
    idx = names.own_indices(x.rank)
    i, g = idx[0], idx[1]
    reduced = names.reduced_indices(x.rank - 1)
    at = [i, f"{per_group}*{g} + {reduced[0]}"] + reduced[1:]
    count = "(" + " * ".join([str(per_group)] + list(x.shape[2:])) + ")" if x.rank > 2 \
        else str(per_group)
    where = [f"{g} in 0:{groups}", f"{reduced[0]} in 0:{per_group}"]
    ranges = {i: x.shape[0], **{r: s for r, s in zip(reduced[1:], x.shape[2:])}}
    mean = t.new(f"{base}_mean", shape=(x.shape[0], str(groups)), dtype=x.dtype)
    t.statement(mean, [i, g], "+=!", x.read(at), [(x, at)], ranges, where)
    t.statement(mean, [i, g], "=", f"{mean.read([i, g])} / {count}")
    centred = f"({x.read(at)} - {mean.read([i, g])})"
    var = t.new(f"{base}_var", shape=(x.shape[0], str(groups)), dtype=x.dtype)
    t.statement(var, [i, g], "+=!", f"{centred} * {centred}", [(x, at)], ranges, where)
    t.statement(var, [i, g], "=", f"{var.read([i, g])} / {count}")
    group = [i, f"{idx[1]} / {per_group}"]
    out = t.new(shape=x.shape, dtype=x.dtype)
    value = (f"({x.read(idx)} - {mean.read(group)}) * rsqrt({var.read(group)} + {eps!r})")
    if weight is not None:
        value += f" * {weight.read([idx[1]])}"
    if bias is not None:
        value += f" + {bias.read([idx[1]])}"
    t.statement(out, idx, "=", value)
    return (out, None, None)
