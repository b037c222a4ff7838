"""Reads at computed indices: embedding lookups, gather, embedding bags (ragged sums)."""

from . import op
from .. import names
from ..values import broadcast_indices


@op("aten.embedding.default")
def embedding(t, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``W(idx(i, j), k)``; with padding_idx, that row's value is read as it is but
    passes no gradient (``stop_gradient`` in the branch that reads it), as in PyTorch."""
    if scale_grad_by_freq:
        t.fail("embedding with scale_grad_by_freq=True is not supported")
    out = t.new()
    idx = names.own_indices(out.rank)
    at = idx[:indices.rank]
    row = indices.read(at)
    value = weight.read([row, idx[-1]])
    if padding_idx is not None and padding_idx >= 0:
        value = f"select({row} == {padding_idx}, stop_gradient({value}), {value})"
    t.statement(out, idx, "=", value,
                [(indices, at), (weight, [row, idx[-1]])], dict(zip(idx, out.shape)))
    return out


@op("aten.embedding_renorm.default")
def embedding_renorm(t, weight, indices, max_norm, norm_type):
    """Embedding's max_norm: the rows the indices use whose norm exceeds max_norm are
    scaled by max_norm / (norm + 1e-7), as PyTorch's embedding_renorm_; the module writes
    the result back into the weight (export's parameter mutation). PyTorch renormalises
    without autograd: the value is ``stop_gradient(w * scale) + (w - stop_gradient(w))``,
    exactly ``w * scale``, whose gradient passes to w unchanged."""
    base = t.default_name()
    v, d = names.own_indices(2)
    at = names.reduced_indices(indices.rank)
    used = t.new(f"{base}_used", shape=(weight.shape[0],), dtype="int32")
    t.statement(used, [v], "max=!", f"select({indices.read(at)} == {v}, 1, 0)",
                [(indices, at)], {v: weight.shape[0], **dict(zip(at, indices.shape))})
    (r,) = names.reduced_indices(1)
    w_r = weight.read([v, r])
    term = f"{w_r} * {w_r}" if norm_type == 2 else f"pow(fabs({w_r}), {float(norm_type)!r})"
    total = t.new(f"{base}_norm", shape=(weight.shape[0],), dtype=weight.dtype)
    t.statement(total, [v], "+=!", term, [(weight, [v, r])])
    norm = (f"sqrt({total.read([v])})" if norm_type == 2
            else f"pow({total.read([v])}, {1 / float(norm_type)!r})")
    scale = (f"select({used.read([v])} > 0 && {norm} > {float(max_norm)!r}, "
             f"{float(max_norm)!r} / ({norm} + 1e-7), 1)")
    out = t.new(shape=weight.shape, dtype=weight.dtype)
    w = weight.read([v, d])
    # export reads the weight through detach (the renorm runs under no_grad): the
    # identity term reads the tensor before it, the parameter, which autograd updates
    source = _before_detach(t, t.node.args[0])
    p = source.read([v, d])
    t.statement(out, [v, d], "=", f"stop_gradient({w} * {scale}) + ({p} - stop_gradient({p}))",
                [(weight, [v, d]), (source, [v, d])])
    return out


def _before_detach(t, node):
    """The value ``node`` reads through detach and alias nodes."""
    import torch  # noqa: PLC0415 (the ops module needs no torch otherwise)
    skipped = (torch.ops.aten.detach.default, torch.ops.aten.alias.default)
    while getattr(node, "op", None) == "call_function" and node.target in skipped:
        node = node.args[0]
    return t.values[node]


@op("aten.gather.default")
def gather(t, x, dim, index, sparse_grad=False):
    """A masked sum over the gathered dimension, ``out(i, j) +=! select(r == index(i, j),
    x(i, r), 0)``: exact (the other terms add 0), and its gradient is a select (the
    dimension is a class count in nll_loss and cross_entropy, where export puts it).
    The index is compared through ``positions(index(i, j))``, positions(c) = c: a read
    at a computed index, checked at run time, so an index out of range (a label >= the
    class count) is an error naming the gather, as in PyTorch, not a sum of zeros."""
    dim = dim % x.rank
    out = t.new()
    idx = names.own_indices(out.rank)
    (r,) = names.reduced_indices(1)
    at = list(idx)
    at[dim] = r
    positions = t.new(f"{out.name}_positions", shape=(x.shape[dim],), dtype=index.dtype)
    (c,) = names.own_indices(1)
    t.statement(positions, [c], "=", f"{index.dtype}({c})", [], {c: x.shape[dim]})
    checked = positions.read([index.read(idx)])
    t.statement(out, idx, "+=!", f"select({r} == {checked}, {x.read(at)}, 0)",
                [(index, idx), (x, at)], {**dict(zip(idx, out.shape)), r: x.shape[dim]})
    return out


@op("aten.arange.start_step", "aten.arange.default", "aten.arange.start")
def arange(t, start, end=None, step=1, **ignored):
    if end is None:
        start, end = 0, start
    out = t.new()
    (i,) = names.own_indices(1)
    value = i if step == 1 else f"{step} * {i}"
    if start:
        value = f"{start} + {value}"
    t.statement(out, [i], "=", f"{out.dtype}({value})", [], {i: out.shape[0]})
    return out


_MODES = {0: "sum", 1: "mean", 2: "max"}


def _fixed_bags(t):
    """The (B, L) token tensor when nn.EmbeddingBag got one bag per row: its forward then
    flattens the rows (a view) and makes offsets 0, L, 2L, ... (arange). Such bags are a
    plain sum over the row, with no ragged ranges."""
    indices, offsets = t.node.args[1], t.node.args[2]
    if str(getattr(indices, "target", "")) != "aten.view.default" or \
            str(getattr(offsets, "target", "")) != "aten.arange.start_step":
        return None
    tokens = t.values[indices.args[0]]
    start, _, step = offsets.args[:3]
    if tokens.rank != 2 or start != 0 or str(step) != tokens.shape[1]:
        return None
    return tokens


def _bag_term(weight, token, d, padding_idx):
    """A bag's term: the token's row, 0 for the padding index (excluded, as in PyTorch)."""
    value = weight.read([token, d])
    if padding_idx is None:
        return value
    return f"select({token} == {padding_idx}, 0, {value})"


def _bag_count(token, padding_idx):
    """What a token adds to its bag's count for a mean: 1, or 0 for the padding index."""
    if padding_idx is None:
        return "1"
    return f"select({token} == {padding_idx}, 0, 1)"


def _fixed_embedding_bag(t, weight, tokens, mode, padding_idx):
    out = t.new(shape=(tokens.shape[0], weight.shape[1]), dtype=weight.dtype)
    b, d = names.own_indices(2)
    (k,) = names.reduced_indices(1)
    row = tokens.read([b, k])
    sizes = {b: tokens.shape[0], d: weight.shape[1], k: tokens.shape[1]}
    t.statement(out, [b, d], "+=!", _bag_term(weight, row, d, padding_idx),
                [(tokens, [b, k]), (weight, [row, d])], sizes)
    if mode == "mean" and padding_idx is None:
        t.statement(out, [b, d], "=", f"{out.read([b, d])} / {tokens.shape[1]}")
    elif mode == "mean":  # divided by the tokens that are not padding (none: 0, as PyTorch)
        count = t.new(f"{out.name}_count", shape=(tokens.shape[0],), dtype=weight.dtype)
        t.statement(count, [b], "+=!", f"{weight.dtype}({_bag_count(row, padding_idx)})",
                    [(tokens, [b, k])], {b: tokens.shape[0], k: tokens.shape[1]})
        t.statement(out, [b, d], "=", f"{out.read([b, d])} / fmax({count.read([b])}, 1)")
    return out


@op("aten._embedding_bag.default", "aten._embedding_bag_forward_only.default")
def embedding_bag(t, weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    if _MODES.get(mode) not in ("sum", "mean"):
        t.fail("embedding_bag in mode 'max' is not supported")
    if scale_grad_by_freq:
        t.fail("embedding_bag with scale_grad_by_freq is not supported")
    # the padding index's entries are left out of their bags (a mean counts the others)
    padding_idx = padding_idx if padding_idx is not None and padding_idx >= 0 else None
    fixed = _fixed_bags(t)
    if fixed is not None and per_sample_weights is None:
        return (_fixed_embedding_bag(t, weight, fixed, _MODES[mode], padding_idx), None, None,
                None)
    bags = offsets.shape[0] if not include_last_offset else f"{offsets.shape[0]} - 1"
    b, d = names.own_indices(2)
    (k,) = names.reduced_indices(1)
    count = indices.shape[0]
    ends = t.new(f"{t.default_name()}_end", shape=(bags,), dtype=offsets.dtype)
    following = offsets.read([f"{b} + 1"], guarded=True)
    end = f"select({b} + 1 < {offsets.shape[0]}, {following}, {offsets.dtype}({count}))"
    # PyTorch refuses offsets that do not start at 0, fall, or pass the indices' end;
    # the ragged range would clip them silently: a read of this 1-element tensor at 1
    # fails at run time with its name
    check = t.new(f"{t.default_name()}_offsets_must_start_at_0_rise_and_end_within_indices",
                  shape=("1",), dtype="int64")
    (z,) = names.own_indices(1)
    t.statement(check, [z], "=", f"int64({z})", [], {z: "1"})
    start = offsets.read([b])
    ok = f"({b} > 0 || {start} == 0) && {start} <= {end} && {end} <= {count}"
    guard = check.read([f"select({ok}, 0, 1)"])
    t.statement(ends, [b], "=", f"select({guard} == 0, {end}, {end})", [], {b: bags})
    term = weight.read([indices.read([k]), d])
    if per_sample_weights is not None:
        term += f" * {per_sample_weights.read([k])}"
    if padding_idx is not None:
        term = f"select({indices.read([k])} == {padding_idx}, 0, {term})"
    out = t.new(shape=(bags, weight.shape[1]), dtype=weight.dtype)
    t.statement(out, [b, d], "+=!", term, [(weight, [indices.read([k]), d]), (indices, [k])],
                {b: bags, d: weight.shape[1]},
                where=[f"{k} in {offsets.read([b])}:{ends.read([b])}"])
    if _MODES[mode] == "mean" and padding_idx is None:
        size = f"{ends.read([b])} - {offsets.read([b])}"
        t.statement(out, [b, d], "=", f"{out.read([b, d])} / fmax(float32({size}), 1)")
    elif _MODES[mode] == "mean":  # the tokens of the bag that are not padding
        count = t.new(f"{out.name}_count", shape=(bags,), dtype=weight.dtype)
        t.statement(count, [b], "+=!",
                    f"{weight.dtype}({_bag_count(indices.read([k]), padding_idx)})",
                    [(indices, [k])], {b: bags},
                    where=[f"{k} in {offsets.read([b])}:{ends.read([b])}"])
        t.statement(out, [b, d], "=", f"{out.read([b, d])} / fmax({count.read([b])}, 1)")
    return (out, None, None, None)


@op("aten.index_select.default")
def index_select(t, x, dim, index):
    """``out(..., i, ...) = x(..., index(i), ...)``: a read at a computed index."""
    dim = dim % x.rank
    out = t.new()
    idx = names.own_indices(out.rank)
    at = list(idx)
    at[dim] = index.read([idx[dim]])
    t.statement(out, idx, "=", x.read(at), [(x, at), (index, [idx[dim]])],
                dict(zip(idx, out.shape)))
    return out


@op("aten.index.Tensor")
def index_tensor(t, x, indices):
    """``x[i, :, j]``: integer index tensors on some dimensions (``None`` for the others,
    ``:``), broadcast together to one shape S, as PyTorch does: the result has S where
    the indexed dimensions were when they are adjacent, else S first, then the other
    dimensions in order. Each index is read broadcast to S; a negative one counts from
    the end of its dimension, one out of range fails at run time."""
    used = [k for k, i in enumerate(indices) if i is not None]
    if any(indices[k].dtype == "bool" for k in used):
        t.fail("indexing with a bool mask is not supported (its result's shape depends on "
               "the mask's values)")
    out = t.new()
    idx = names.own_indices(out.rank)
    rank = max(indices[k].rank for k in used)
    first = used[0] if used == list(range(used[0], used[-1] + 1)) else 0
    broadcast, shape = idx[first:first + rank], out.shape[first:first + rank]
    others = iter(idx[:first] + idx[first + rank:])
    at, reads = [], []
    for k in range(x.rank):
        index = indices[k] if k < len(indices) else None
        if index is None:
            at.append(next(others))
            continue
        own = broadcast_indices(index, shape, broadcast)
        row = index.read(own)
        at.append(f"select({row} < 0, {row} + {x.shape[k]}, {row})")
        reads.append((index, own))
    t.statement(out, idx, "=", x.read(at), [(x, at)] + reads, dict(zip(idx, out.shape)))
    return out


@op("aten.index_put.default")
def index_put(t, x, indices, values, accumulate=False):
    """``x[i, j] = v`` and ``x.index_put((i, j), v, accumulate=True)``: integer index
    tensors on the leading dimensions, broadcast together to one shape S, ``v`` broadcast
    to S followed by the other dimensions. With accumulate, every match adds (a masked
    sum, run as a scatter); without, of several writes to one element the last wins (PyTorch
    leaves that undefined)."""
    used = [k for k, i in enumerate(indices) if i is not None]
    if any(indices[k].dtype == "bool" for k in used):
        t.fail("index_put with a bool mask is not supported (write torch.where)")
    if used != list(range(len(used))):
        t.fail("index_put on dimensions after a slice is not supported")
    m = len(used)
    rank = max(indices[k].rank for k in used)
    shapes = [indices[k].shape for k in used]
    s_shape = []
    for back in range(rank, 0, -1):
        sizes = [s[-back] for s in shapes if len(s) >= back and s[-back] != "1"]
        s_shape.append(sizes[0] if sizes else "1")
    out = t.new()
    own = names.own_indices(x.rank)
    s_idx = names.reduced_indices(rank)
    match, reads = [], []
    for k in used:
        at = broadcast_indices(indices[k], s_shape, s_idx)
        row = indices[k].read(at)
        match.append(f"select({row} < 0, {row} + {x.shape[k]}, {row}) == {own[k]}")
        reads.append((indices[k], at))
    match = " && ".join(match)
    ranges = dict(zip(own, x.shape))
    t.statement(out, own, "=", x.read(own), [(x, own)], ranges)
    if accumulate:
        v_at = broadcast_indices(values, s_shape + list(x.shape[m:]), s_idx + own[m:])
        ranges.update(zip(s_idx, s_shape))
        t.statement(out, own, "+=", f"select({match}, {values.read(v_at)}, 0)",
                    reads + [(values, v_at)], ranges)
        return out
    if rank != 1:
        t.fail("index_put without accumulate takes one-dimensional indices only")
    last = t.new(f"{t.default_name()}_last", shape=tuple(x.shape[:m]), dtype="int64")
    t.statement(last, own[:m], "max=!", f"select({match}, {s_idx[0]}, -1)", reads,
                {**dict(zip(own[:m], x.shape[:m])), s_idx[0]: s_shape[0]})
    found = last.read(own[:m])
    v_at = broadcast_indices(values, s_shape + list(x.shape[m:]),
                             [f"select({found} >= 0, {found}, 0)"] + own[m:])
    t.statement(out, own, "=", f"select({found} >= 0, {values.read(v_at)}, {x.read(own)})",
                [(last, own[:m]), (x, own)], ranges)
    return out
