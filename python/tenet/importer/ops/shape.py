"""Views and shape ops. Views (permute, transpose, squeeze, unsqueeze, expand, slice,
select, split, flip) write no statement: they are index maps that the reads of later
statements apply (values.Tensor.view). view/reshape/flatten write ``reshape(x, ...)``;
cat writes a select."""

from . import op
from .. import names
from ..values import Axis, Size, literal


@op("aten.sym_size.int")
def sym_size(t, x, dim):
    return Size(x.shape[dim])


@op("aten.permute.default")
def permute(t, x, dims):
    dims = [d % x.rank for d in dims]
    # own index k of the result is index dims[k] of x
    inverse = [None] * x.rank
    for k, d in enumerate(dims):
        inverse[d] = Axis(k)
    return x.view([x.shape[d] for d in dims], inverse)


@op("aten.transpose.int")
def transpose(t, x, a, b):
    dims = list(range(x.rank))
    a, b = a % x.rank, b % x.rank
    dims[a], dims[b] = dims[b], dims[a]
    return permute(t, x, dims)


@op("aten.t.default")
def t_(t, x):
    return permute(t, x, [1, 0]) if x.rank == 2 else x


@op("aten.unsqueeze.default")
def unsqueeze(t, x, dim):
    dim = dim % (x.rank + 1)
    axes = [Axis(k if k < dim else k + 1) for k in range(x.rank)]
    return x.view(x.shape[:dim] + ("1",) + x.shape[dim:], axes)


@op("aten.squeeze.dims", "aten.squeeze.dim", "aten.squeeze.default")
def squeeze(t, x, dims=None):
    if dims is None:
        dims = [k for k, s in enumerate(x.shape) if s == "1"]
    dims = {d % x.rank for d in ([dims] if isinstance(dims, int) else dims)
            if x.shape[d % x.rank] == "1"}
    axes, shape = [], []
    for k, size in enumerate(x.shape):
        if k in dims:
            axes.append(Axis(None, offset=0))
        else:
            axes.append(Axis(len(shape)))
            shape.append(size)
    return x.view(shape, axes)


@op("aten.expand.default")
def expand(t, x, sizes):
    shape = t.shape()
    lead = len(shape) - x.rank
    axes = [Axis(None) if size == "1" and shape[lead + k] != "1" else Axis(lead + k)
            for k, size in enumerate(x.shape)]
    return x.view(shape, axes)


@op("aten.slice.Tensor")
def slice_(t, x, dim=0, start=None, end=None, step=1):
    dim = dim % x.rank
    start = start or 0
    if not isinstance(start, Size) and start < 0 and x.shape[dim].isdigit():
        start = max(start + int(x.shape[dim]), 0)  # x[-3:] on a dimension of fixed size
    if isinstance(start, Size) or start < 0:
        t.fail("slices with a symbolic start, or a negative one on a dimension of "
               "dynamic size, are not supported")
    axes = [Axis(k) for k in range(x.rank)]
    axes[dim] = Axis(dim, step, start)
    return x.view(t.shape(), axes)


@op("aten.select.int")
def select(t, x, dim, index):
    dim = dim % x.rank
    if index < 0:
        if not x.shape[dim].isdigit():
            t.fail("selecting a negative index of a dimension of dynamic size is not supported")
        index += int(x.shape[dim])
    axes = [Axis(k if k < dim else k - 1) for k in range(x.rank)]
    axes[dim] = Axis(None, offset=index)
    return x.view(t.shape(), axes)


@op("aten.split_with_sizes.default", "aten.split.Tensor")
def split(t, x, sizes, dim=0):
    dim = dim % x.rank
    total = int(x.shape[dim])
    if isinstance(sizes, int):
        sizes = [min(sizes, total - s) for s in range(0, total, sizes)]
    parts, start = [], 0
    for size in sizes:
        axes = [Axis(k) for k in range(x.rank)]
        axes[dim] = Axis(dim, 1, start)
        parts.append(x.view(x.shape[:dim] + (str(size),) + x.shape[dim + 1:], axes))
        start += size
    return tuple(parts)


@op("aten.flip.default")
def flip(t, x, dims):
    """A view: index k of a flipped dimension of size n reads n - 1 - k."""
    axes = [Axis(k) for k in range(x.rank)]
    for d in dims:
        d %= x.rank
        if not x.shape[d].isdigit():
            t.fail("flipping a dimension of dynamic size is not supported")
        axes[d] = Axis(d, -1, int(x.shape[d]) - 1)
    return x.view(x.shape, axes)


@op("aten.constant_pad_nd.default")
def constant_pad(t, x, pad, value=0):
    """Guarded reads at the shifted position; a nonzero fill where the read is outside."""
    x = t.materialise(x)
    out = t.new()
    idx = names.own_indices(out.rank)
    at, inside = list(idx), []
    for k in range(len(pad) // 2):
        d = x.rank - 1 - k
        before = pad[2 * k]
        at[d] = idx[d] if before == 0 else (f"{idx[d]} - {before}" if before > 0
                                            else f"{idx[d]} + {-before}")
        inside.append(f"{at[d]} >= 0 && {at[d]} < {x.shape[d]}")
    read = x.read(at, guarded=True)
    if value:
        read = f"select({' && '.join(inside)}, {read}, {literal(value)})"
    t.statement(out, idx, "=", read, [], dict(zip(idx, out.shape)))
    return out


@op("aten.repeat.default")
def repeat(t, x, repeats):
    """Tiles: index k of a repeated dimension of size n reads k % n."""
    out = t.new()
    idx = names.own_indices(out.rank)
    lead = out.rank - x.rank
    at = [idx[lead + k] if r == 1 else f"{idx[lead + k]} % {x.shape[k]}"
          for k, r in enumerate(repeats[lead:])]
    t.statement(out, idx, "=", x.read(at), [], dict(zip(idx, out.shape)))
    return out


@op("aten.upsample_nearest2d.vec", "aten.upsample_nearest2d.default")
def upsample_nearest(t, x, output_size=None, scale_factors=None):
    """Nearest neighbour: output row k reads input row k * H / OH (exact for integer
    factors, which are what this supports)."""
    out = t.new()
    idx = names.own_indices(out.rank)
    at = list(idx[:2])
    for k in (2, 3):
        size, target = x.shape[k], out.shape[k]
        if not (size.isdigit() and target.isdigit()) or int(target) % int(size):
            t.fail("upsample_nearest2d is supported for integer scale factors only")
        factor = int(target) // int(size)
        at.append(idx[k] if factor == 1 else f"{idx[k]} / {factor}")
    t.statement(out, idx, "=", x.read(at), [], dict(zip(idx, out.shape)))
    return out


@op("aten.cat.default")
def cat(t, tensors, dim=0):
    out = t.new()
    dim = dim % out.rank
    idx = names.own_indices(out.rank)
    # empty parts add nothing; a 1-D empty one may sit among tensors of any rank (as
    # PyTorch allows: an empty key cache before the first step's keys)
    parts = [x for x in tensors
             if not (x.shape[dim if x.rank == out.rank else 0] == "0" and
                     (x.rank == out.rank or x.rank == 1))]
    if len(parts) == 1 and parts[0].shape == out.shape:
        return parts[0]
    if not all(x.shape[dim].isdigit() for x in parts[:-1]):
        t.fail("cat along a dimension of dynamic size is not supported")
    value, start = None, 0
    terms = []
    for x in parts:
        at = list(idx)
        at[dim] = idx[dim] if start == 0 else f"{idx[dim]} - {start}"
        terms.append((start, t.materialise(x, f"{out.name}_part").read(at, guarded=True)))
        start += int(x.shape[dim])
    value = terms[-1][1]
    for begin, read in reversed(terms[:-1]):
        end = begin + _size_at(terms, begin, start)
        value = f"select({idx[dim]} < {end}, {read}, {value})"
    t.statement(out, idx, "=", value, [], dict(zip(idx, out.shape)))
    return out


def _size_at(terms, begin, total):
    starts = [s for s, _ in terms] + [total]
    return starts[starts.index(begin) + 1] - begin


@op("aten.view.default", "aten._unsafe_view.default", "aten.reshape.default")
def view(t, x, shape):
    """``y = reshape(x, sizes...)``: the language's row-major view (x a tensor of its
    own: a view of a view is copied first)."""
    out_shape = t.shape()
    if out_shape == x.shape:
        return x
    x = t.materialise(x)
    out = t.new()
    t.comment()
    t.lines.append(f"  {out.name} = reshape({x.name}, {', '.join(out_shape)})")
    return out


@op("aten.as_strided.default")
def as_strided(t, x, size, stride, storage_offset=None):
    """A strided view of x's storage. x must be contiguous in PyTorch (the export's
    metadata says): then the view reads x's row-major elements at offset + Σ stride·i.
    The common case, a restride of a fresh tensor that only moves size-1 dimensions
    (ConvNeXt's head), is x itself."""
    meta = t.node.args[0].meta.get("val")
    if meta is None or not meta.is_contiguous():
        t.fail("as_strided of a tensor that is not contiguous is not supported")
    out_shape = t.shape()
    offset = int(storage_offset or 0) - int(meta.storage_offset())
    strides = [str(s) for s in stride]
    contiguous, running = [], "1"
    for d in reversed(out_shape):
        contiguous.insert(0, running)
        running = d if running == "1" else f"{d}*{running}"
    if out_shape == x.shape and offset == 0 and all(
            d == "1" or s == c for d, s, c in zip(out_shape, strides, contiguous)):
        return x
    if not all(s.lstrip("-").isdigit() for s in strides):
        t.fail("as_strided with symbolic strides is not supported")
    x = t.materialise(x)
    flat = t.new(f"{x.name}_flat", shape=("*".join(x.shape),), dtype=x.dtype)
    t.lines.append(f"  {flat.name} = reshape({x.name}, {flat.shape[0]})")
    out = t.new()
    idx = names.own_indices(out.rank)
    terms = [f"{s}*{i}" for s, i in zip(strides, idx) if s != "0"] + ([str(offset)] if offset else [])
    t.statement(out, idx, "=", flat.read([" + ".join(terms) or "0"]), [],
                dict(zip(idx, out.shape)))
    return out


@op("aten.slice_scatter.default")
def slice_scatter(t, base, src, dim=0, start=None, end=None, step=1):
    """base with src written over the slice start:end:step of dimension dim: a select,
    so each gradient goes where its values went (src's to the slice, base's elsewhere)."""
    dim = dim % base.rank
    whole = (start is None or start == 0) and step == 1 and (
        end is None or (not isinstance(end, Size) and end >= 2 ** 62))
    if whole and src.shape == base.shape:
        return src  # a write over the whole dimension (x[:, 1:3] = ... writes x[:] too)
    out = t.new()
    size = out.shape[dim]
    if not size.isdigit():
        t.fail("slice_scatter on a dimension of dynamic size is not supported")
    length = int(size)
    start, end = _bound(start, 0, length), _bound(end, length, length)
    idx = names.own_indices(out.rank)
    i = idx[dim]
    inside = [f"{i} >= {start}", f"{i} < {end}"]
    at = list(idx)
    shifted = f"{i} - {start}" if start else i
    if step != 1:
        inside.append(f"({shifted}) % {step} == 0")
        at[dim] = f"({shifted}) / {step}"
    else:
        at[dim] = shifted
    source = t.materialise(src, f"{out.name}_src").read(at, guarded=True)
    value = f"select({' && '.join(inside)}, {source}, {base.read(idx)})"
    t.statement(out, idx, "=", value, [], dict(zip(idx, out.shape)))
    return out


def _bound(value, default, length):
    """A slice bound as PyTorch clamps it: None is the default, negatives count from the
    end, and the result lies in [0, length]."""
    if value is None:
        return default
    value = int(value)
    if value < 0:
        value += length
    return min(max(value, 0), length)


@op("aten.select_scatter.default")
def select_scatter(t, base, src, dim, index):
    """base with src written over index `index` of dimension dim."""
    out = t.new()
    dim = dim % out.rank
    if index < 0:
        if not out.shape[dim].isdigit():
            t.fail("select_scatter at a negative index of a dimension of dynamic size is not "
                   "supported")
        index += int(out.shape[dim])
    idx = names.own_indices(out.rank)
    at = idx[:dim] + idx[dim + 1:]
    value = f"select({idx[dim]} == {index}, {src.read(at)}, {base.read(idx)})"
    t.statement(out, idx, "=", value, [], dict(zip(idx, out.shape)))
    return out


@op("aten.upsample_bilinear2d.vec", "aten.upsample_bilinear2d.default")
def upsample_bilinear(t, x, output_size=None, align_corners=False, scale_factors=None):
    """Bilinear interpolation as PyTorch's: each output row reads input rows i0 and i1
    with weights 1 - l and l, where the source position is scale * (k + 0.5) - 0.5
    clamped at 0 (or scale * k with align_corners); the rows and weights, which depend
    on the shapes only, are constants of the program (computed here as PyTorch does)."""
    out = t.new()
    idx = names.own_indices(out.rank)
    rows, weights = [], []
    for k, axis in ((2, "h"), (3, "w")):
        size, target = x.shape[k], out.shape[k]
        if not (size.isdigit() and target.isdigit()):
            t.fail("upsample_bilinear2d of a dynamic spatial size is not supported")
        factor = scale_factors[k - 2] if scale_factors else None
        first, second, low, high = _linear_taps(int(size), int(target), align_corners, factor)
        rows.append([t.add_constant(f"{out.name}_{axis}{n}", v).read([idx[k]])
                     for n, v in ((0, first), (1, second))])
        weights.append([t.add_constant(f"{out.name}_{axis}_weight{n}", v).read([idx[k]])
                        for n, v in ((0, low), (1, high))])
    lead = idx[:2]
    terms = []
    for a in range(2):
        inner = " + ".join(f"{weights[1][b]} * {x.read(lead + [rows[0][a], rows[1][b]])}"
                           for b in range(2))
        terms.append(f"{weights[0][a]} * ({inner})")
    t.statement(out, idx, "=", " + ".join(terms), [], dict(zip(idx, out.shape)))
    return out


def _linear_taps(size, target, align_corners, factor):
    """PyTorch's linear interpolation along one axis: the two source indices and their
    weights for each of ``target`` outputs (area_pixel_compute_source_index), the
    weights in float64 (the module casts them to the model's float type)."""
    import torch
    float_dtype = torch.float64
    if align_corners:
        scale = (size - 1) / (target - 1) if target > 1 else 0.0
    else:
        scale = 1.0 / factor if factor else size / target
    k = torch.arange(target, dtype=float_dtype)
    source = k * scale if align_corners else (scale * (k + 0.5) - 0.5).clamp(min=0)
    first = source.to(torch.int64).clamp(max=size - 1)
    second = torch.where(first < size - 1, first + 1, first)
    high = source - first.to(float_dtype)
    return first, second, 1 - high, high
