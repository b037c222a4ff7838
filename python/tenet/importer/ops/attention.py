"""scaled_dot_product_attention, kept whole by export (export.py leaves it out of the
decompositions) and written as PyTorch's math path computes it: scores q·k over the
head size times the scale, the boolean or additive mask (or the causal one), a softmax
whose fully masked rows are 0 (PyTorch's safe softmax), dropout on the weights, and
the weighted sum of v. Grouped-query attention reads key/value head h // (Hq / Hk)."""

from . import op
from .. import names
from ..values import literal

_MINUS_INF = literal(float("-inf"))


def _batch_at(operand, query, idx, gqa):
    """The indices reading ``operand`` (k, v or a mask) over the query's batch dimensions:
    equal sizes read the same index, size 1 reads 0, a smaller head count (GQA) reads
    head h // (Hq / Hk)."""
    lead = len(query.shape) - 2 - (len(operand.shape) - 2)
    at = []
    for d, size in enumerate(operand.shape[:-2]):
        own, wanted = idx[lead + d], query.shape[lead + d]
        if size == wanted:
            at.append(own)
        elif size == "1":
            at.append("0")
        elif gqa and lead + d == len(query.shape) - 3:
            at.append(f"{own} / {int(wanted) // int(size)}")
        else:
            return None
    return at


@op("aten.scaled_dot_product_attention.default")
def scaled_dot_product_attention(t, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False,
                                 scale=None, enable_gqa=False):
    base = t.default_name()
    rank = q.rank
    batch_shape, length, keys = q.shape[:-2], q.shape[-2], k.shape[-2]
    idx = names.own_indices(rank)
    batch, l, m = idx[:-2], idx[-2], idx[-1]
    (e,) = names.reduced_indices(1)
    k_at, v_at = _batch_at(k, q, idx, enable_gqa), _batch_at(v, q, idx, enable_gqa)
    if k_at is None or v_at is None:
        t.fail("scaled_dot_product_attention with key/value batch sizes that do not "
               "broadcast to the query's is not supported")
    scale = scale if scale is not None else 1.0 / float(q.shape[-1]) ** 0.5
    shape = tuple(batch_shape) + (length, keys)
    ranges = dict(zip(idx, shape))
    scores = t.new(f"{base}_scores", shape=shape, dtype=q.dtype)
    t.statement(scores, idx, "+=!", f"{q.read(batch + [l, e])} * {k.read(k_at + [m, e])}",
                [], {**ranges, e: q.shape[-1]})
    logit = f"{scores.read(idx)} * {literal(float(scale))}"
    if attn_mask is not None:
        mask_at = _batch_at(attn_mask, q, idx, False) if attn_mask.rank >= 2 else []
        if mask_at is None:
            t.fail("scaled_dot_product_attention with a mask that does not broadcast is "
                   "not supported")
        mask = attn_mask.read(mask_at + [l if attn_mask.shape[-2] != "1" else "0",
                                         m if attn_mask.shape[-1] != "1" else "0"])
        logit = (f"select({mask}, {logit}, {_MINUS_INF})" if attn_mask.dtype == "bool"
                 else f"{logit} + {mask}")
    if is_causal:
        logit = f"select({m} <= {l}, {logit}, {_MINUS_INF})"
    logits = t.new(f"{base}_logits", shape=shape, dtype=q.dtype)
    t.statement(logits, idx, "=", logit, [], ranges)
    weights = _safe_softmax(t, logits, idx, base)
    if dropout_p > 0:
        drop = t.add_input(f"{base}_mask", shape, q.dtype, "dropout", extra=dropout_p)
        weights = t.elementwise(lambda w, d: f"{w} * {d}", [weights, drop],
                                wanted=f"{base}_dropped", shape=shape)
    out = t.new()
    out_idx = batch + [l, idx[-1]]
    (s,) = names.reduced_indices(1, skip=1)
    t.statement(out, out_idx, "+=!",
                f"{weights.read(batch + [l, s])} * {v.read(v_at + [s, idx[-1]])}", [],
                {**dict(zip(out_idx, out.shape)), s: keys})
    return out


def _safe_softmax(t, logits, idx, base):
    """softmax over the last dimension; a row of -inf only (fully masked) is 0, and no
    NaN is made on the way (its max is read as 0)."""
    kept = idx[:-1]
    row_shape = logits.shape[:-1]
    largest = t.new(f"{base}_max", shape=row_shape, dtype=logits.dtype)
    t.statement(largest, kept, "max=!", logits.read(idx), [(logits, idx)],
                dict(zip(idx, logits.shape)))
    top = largest.read(kept)
    e = t.new(f"{base}_exp", shape=logits.shape, dtype=logits.dtype)
    t.statement(e, idx, "=",
                f"exp({logits.read(idx)} - select({top} == {_MINUS_INF}, 0, {top}))")
    total = t.new(f"{base}_sum", shape=row_shape, dtype=logits.dtype)
    t.statement(total, kept, "+=!", e.read(idx), [(e, idx)], dict(zip(idx, logits.shape)))
    weights = t.new(f"{base}_weights", shape=logits.shape, dtype=logits.dtype)
    t.statement(weights, idx, "=",
                f"select({top} == {_MINUS_INF}, 0, {e.read(idx)} / {total.read(kept)})")
    return weights
