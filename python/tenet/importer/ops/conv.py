"""Convolutions and pooling in index notation: strides as affine indices, padding as
guarded reads (zeros outside the input), kernel windows as reduced indices."""

from . import op
from .. import names
from ..values import literal


def _spatial(kernel, stride, padding, dilation, own, window):
    """The input indices of the spatial dimensions: stride * own + dilation * window -
    padding; and whether any padding makes the read a guarded one."""
    at = []
    for k in range(len(kernel)):
        index = own[k] if stride[k] == 1 else f"{stride[k]}*{own[k]}"
        tap = window[k] if dilation[k] == 1 else f"{dilation[k]}*{window[k]}"
        text = f"{index} + {tap}"
        if padding[k]:
            text += f" - {padding[k]}"
        at.append(text)
    return at, any(padding)


def _expand(values, count):
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    return values * count if len(values) == 1 else values


@op("aten.convolution.default")
def convolution(t, x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    spatial = x.rank - 2
    if transposed:
        return _transposed(t, x, w, bias, *(_expand(v, spatial)
                                            for v in (stride, padding, dilation)), groups)
    stride, padding, dilation = (_expand(v, spatial) for v in (stride, padding, dilation))
    out = t.new()
    idx = names.own_indices(out.rank)
    batch, channel, own = idx[0], idx[1], idx[2:]
    reduced = names.reduced_indices(1 + spatial)
    c, window = reduced[0], reduced[1:]
    at, padded = _spatial(w.shape[2:], stride, padding, dilation, own, window)
    if padded:
        x = t.materialise(x)
    if groups != 1 and int(out.shape[1]) // groups != 1:
        return _grouped(t, x, w, bias, out, (stride, padding, dilation), groups)
    # Ungrouped, or one output channel per group (depthwise: each output channel
    # reads its own in-per-group input channels, an affine index; a computed one,
    # j / per_group, would make the input gradient a scatter).
    per_group_in = int(w.shape[1])
    if groups == 1:
        source = c
    elif per_group_in == 1:
        source = channel
    else:
        source = f"{per_group_in}*{channel} + {c}"
    _contract(t, out, idx, x, [batch, source] + at, w,
              [channel, "0" if source == channel else c] + window,
              dict(zip(reduced, w.shape[1:])), source == channel, padded)
    _add_bias(t, out, bias)
    return out


def _contract(t, target, idx, x, x_at, w, w_at, reduced, one_channel, padded):
    """``target(idx) +=! x?(x_at) * w(w_at)`` over the input channel and the window
    (``reduced``: their sizes; the channel's is left out when each output channel
    reads one input channel, which then has no index of its own)."""
    ranges = dict(zip(idx, target.shape))
    ranges.update(reduced)
    if one_channel:
        del ranges[next(iter(reduced))]
    reads = [(w, w_at)] if padded else [(x, x_at), (w, w_at)]  # a guarded read gives no range
    t.statement(target, idx, "+=!", f"{x.read(x_at, guarded=padded)} * {w.read(w_at)}",
                reads, ranges)


def _add_bias(t, out, bias):
    if bias is not None:
        idx = names.own_indices(out.rank)
        t.statement(out, idx, "=", f"{out.read(idx)} + {bias.read([idx[1]])}")


def _grouped(t, x, w, bias, out, geometry, groups):
    """A grouped convolution with several output channels per group, over a group
    index of its own: out5(i, g, p, ...) reads input channels in-per-group*g + c and
    weights out-per-group*g + p (affine indices, so both gradients are gathers), and
    the result is out5 viewed as [B, C_out, ...]."""
    per_group_out, per_group_in = int(out.shape[1]) // groups, int(w.shape[1])
    spatial = out.rank - 2
    batch, g, p = names.own_indices(3)
    own = names.own_indices(3 + spatial)[3:]
    reduced = names.reduced_indices(1 + spatial)
    c, window = reduced[0], reduced[1:]
    at, padded = _spatial(w.shape[2:], *geometry, own, window)
    grouped = t.new(f"{t.default_name()}_groups",
                    shape=(out.shape[0], str(groups), str(per_group_out)) + tuple(out.shape[2:]),
                    dtype=out.dtype)
    source = f"{per_group_in}*{g} + {c}" if per_group_in > 1 else g
    _contract(t, grouped, [batch, g, p] + own, x, [batch, source] + at, w,
              [f"{per_group_out}*{g} + {p}", c if per_group_in > 1 else "0"] + window,
              dict(zip(reduced, w.shape[1:])), per_group_in == 1, padded)
    t.lines.append(f"  {out.name} = reshape({grouped.name}, {', '.join(out.shape)})")
    _add_bias(t, out, bias)
    return out


def _transposed(t, x, w, bias, stride, padding, dilation, groups):
    """The gradient of a convolution as a gather: output position k takes input position
    (k + padding - dilation * s) / stride wherever that divides exactly (the others add
    a guarded 0), so no output is written twice. With groups, over a group index of its
    own (as ``_grouped``): out5(i, g, p, ...) reads input channels in-per-group*g + c and
    weights (in-per-group*g + c, p), then is viewed as [B, C_out, ...]."""
    x = t.materialise(x)
    out = t.new()
    spatial = out.rank - 2
    reduced = names.reduced_indices(1 + spatial)
    c, window = reduced[0], reduced[1:]
    if groups == 1:
        idx = names.own_indices(out.rank)
        target, channel, source, own = out, idx[1], c, idx[2:]
    else:
        per_in, per_out = int(x.shape[1]) // groups, int(w.shape[1])
        idx = names.own_indices(3 + spatial)
        channel, own = idx[2], idx[3:]
        source = f"{per_in}*{idx[1]} + {c}"
        target = t.new(f"{t.default_name()}_groups", dtype=out.dtype,
                       shape=(out.shape[0], str(groups), str(per_out)) + tuple(out.shape[2:]))
    at, exact = [], []
    for k, position in enumerate(own):
        tap = window[k] if dilation[k] == 1 else f"{dilation[k]}*{window[k]}"
        position = f"{position} + {padding[k]} - {tap}" if padding[k] else f"{position} - {tap}"
        if stride[k] == 1:
            at.append(position)
        else:
            at.append(f"({position}) / {stride[k]}")
            exact.append(f"({position}) % {stride[k]} == 0 && {position} >= 0")
    w_at = [source, channel] + window
    value = f"{x.read([idx[0], source] + at, guarded=True)} * {w.read(w_at)}"
    if exact:
        value = f"select({' && '.join(exact)}, {value}, 0)"
    ranges = dict(zip(idx, target.shape))
    ranges.update(zip(reduced, [str(int(x.shape[1]) // groups)] + list(w.shape[2:])))
    t.statement(target, idx, "+=!", value, [(w, w_at)], ranges)
    if groups != 1:
        t.lines.append(f"  {out.name} = reshape({target.name}, {', '.join(out.shape)})")
    _add_bias(t, out, bias)
    return out


@op("aten.max_pool2d_with_indices.default")
def max_pool2d(t, x, kernel, stride=(), padding=0, dilation=1, ceil_mode=False):
    out = _pool(t, x, kernel, stride, padding, dilation, ceil_mode, "max=!")
    return (out, None)


@op("aten.avg_pool2d.default")
def avg_pool2d(t, x, kernel, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The window's sum over PyTorch's divisor: the window's size, or, where windows are
    cut short (ceil_mode's last windows, padding with count_include_pad=False), the
    number of its positions inside the input (and its padding, when counted)."""
    out = _pool(t, x, kernel, stride, padding, 1, ceil_mode, "+=!")
    kernel = _expand(kernel, 2)
    padding = _expand(padding, 2)
    stride = _expand(stride, 2) if stride else kernel
    idx = names.own_indices(out.rank)
    cut = ceil_mode and any(_overhang(out, x, kernel, stride, padding, [1, 1]))
    if divisor_override or not (cut or (any(padding) and not count_include_pad)):
        divisor = divisor_override or kernel[0] * kernel[1]
        t.statement(out, idx, "=", f"{out.read(idx)} / {divisor}")
        return out
    window = names.reduced_indices(2)
    at, _ = _spatial(kernel, stride, padding, [1, 1], idx[-2:], window)
    counted = padding if count_include_pad else [0, 0]
    inside = [f"{e} >= {-c} && {e} < {size} + {c}" if c else f"{e} >= 0 && {e} < {size}"
              for e, size, c in zip(at, x.shape[-2:], counted)]
    count = _window_count(t, out, idx[-2:], inside, window, kernel)
    t.statement(out, idx, "=", f"{out.read(idx)} / {count.read(idx[-2:])}")
    return out


def _window_count(t, out, own, conditions, window, sizes):
    """count(own) +=! the window positions where every condition holds: a divisor per
    output position (a constant of the shape; no gradient flows through it)."""
    count = t.new(f"{out.name}_count", shape=out.shape[-2:], dtype=out.dtype)
    ranges = dict(zip(own, out.shape[-2:]))
    where = [f"{w} in 0:{k}" for w, k in zip(window, sizes)]
    t.statement(count, own, "+=!", f"select({' && '.join(conditions)}, 1.0, 0.0)", [],
                ranges, where)
    return count


def _overhang(out, x, kernel, stride, padding, dilation):
    """Per spatial dimension, whether ceil_mode's last window ends past the input and its
    padding (True when a size is symbolic)."""
    beyond = []
    for k in range(2):
        try:
            outs, size = int(out.shape[-2 + k]), int(x.shape[-2 + k])
        except ValueError:
            beyond.append(True)
            continue
        end = (outs - 1) * stride[k] - padding[k] + dilation[k] * (kernel[k] - 1) + 1
        beyond.append(end > size)
    return beyond


_NAN = literal(float("nan"))


def _pool(t, x, kernel, stride, padding, dilation, ceil_mode, reduction):
    kernel = _expand(kernel, 2)
    stride = _expand(stride, 2) if stride else kernel
    padding, dilation = _expand(padding, 2), _expand(dilation, 2)
    out = t.new()
    idx = names.own_indices(out.rank)
    window = names.reduced_indices(2)
    lead = idx[:-2]
    at, padded = _spatial(kernel, stride, padding, dilation, idx[-2:], window)
    # ceil_mode's last windows may end past the input: guarded reads there too
    beyond = _overhang(out, x, kernel, stride, padding, dilation) if ceil_mode else [False] * 2
    guarded = padded or any(beyond)
    if guarded:
        x = t.materialise(x)
    x_at = lead + at
    ranges = dict(zip(idx, out.shape))
    where = [f"{window[0]} in 0:{kernel[0]}", f"{window[1]} in 0:{kernel[1]}"]
    value = x.read(x_at, guarded=guarded)
    if guarded and reduction == "max=!":
        # padding is NaN, which max=! ignores: a window of -inf stays -inf, and the
        # gradient goes to a pixel, never to the padding
        inside = " && ".join(f"{e} >= 0 && {e} < {size}"
                             for e, size, p, b in zip(at, x.shape[-2:], padding, beyond)
                             if p or b)
        value = f"select({inside}, {value}, {_NAN})"
    reads = [] if guarded else [(x, x_at)]
    if reduction != "max=!":
        t.statement(out, idx, reduction, value, reads, ranges, where)
        return out
    # max=! ignores NaN, PyTorch's max pooling propagates it: the window's NaNs are
    # summed too (0 without), and the result is that sum where it is NaN. That path
    # passes no gradient (stop_gradient): PyTorch gives a NaN window's gradient to its
    # NaN pixel, but the gather that would route it cost ResNet-18's training step 4.6%
    # (docs/import.md); every other window's gradient goes to its maximum as PyTorch's
    largest = t.new(f"{out.name}_max", shape=out.shape, dtype=out.dtype)
    t.statement(largest, idx, reduction, value, reads, ranges, where)
    nan = t.new(f"{out.name}_nan", shape=out.shape, dtype=out.dtype)
    read = x.read(x_at, guarded=guarded)
    t.statement(nan, idx, "+=!", f"select({read} != {read}, {read}, 0)", reads, ranges, where)
    t.statement(out, idx, "=", f"select({nan.read(idx)} != {nan.read(idx)}, "
                               f"stop_gradient({nan.read(idx)}), {largest.read(idx)})")
    return out


@op("aten._adaptive_avg_pool2d.default", "aten.adaptive_avg_pool2d.default")
def adaptive_avg_pool2d(t, x, output_size):
    """PyTorch's windows: output o of n over an input of size h averages inputs
    floor(o*h/n) to ceil((o+1)*h/n) - 1 (equal windows when n divides h)."""
    size = _expand(output_size, 2)
    height, width = (int(d) for d in x.shape[-2:])
    if height % size[0] == 0 and width % size[1] == 0:
        kernel = [height // size[0], width // size[1]]
        return avg_pool2d(t, x, kernel, kernel)
    x = t.materialise(x)
    out = t.new()
    idx = names.own_indices(out.rank)
    window = names.reduced_indices(2)
    at, inside, widest = [], [], []
    for own, r, h, n in zip(idx[-2:], window, (height, width), size):
        start, end = f"({own} * {h}) / {n}", f"(({own} + 1) * {h} + {n - 1}) / {n}"
        at.append(f"{start} + {r}")
        inside.append(f"{r} < {end} - {start}")
        widest.append(max((-(-(o + 1) * h // n)) - (o * h // n) for o in range(n)))
    ranges = dict(zip(idx, out.shape))
    where = [f"{w} in 0:{k}" for w, k in zip(window, widest)]
    value = f"select({' && '.join(inside)}, {x.read(idx[:-2] + at, guarded=True)}, 0)"
    t.statement(out, idx, "+=!", value, [], ranges, where)
    count = _window_count(t, out, idx[-2:], inside, window, widest)
    t.statement(out, idx, "=", f"{out.read(idx)} / {count.read(idx[-2:])}")
    return out
