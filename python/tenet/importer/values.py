"""What the translator knows of each graph value: a Tenet tensor (or a view of one, or a
constant), a size expression, or a plain Python value.

A ``Tensor`` has a Tenet name, a shape (one size expression text per dimension) and an
element type. Views (permute, squeeze, unsqueeze, expand, slice, select, split) are not
written as statements: a view keeps the tensor it reads and an affine map from its own
indices to that tensor's, and each read of the view reads the base tensor directly, so
``x.t()`` used by a matmul becomes ``w(j, r)`` in the matmul's statement.
"""

import contextlib
import re

# Element types: torch dtype name -> Tenet type name. float32 and float64 both become
# 'float': a program declared with float runs as float32 or as its float64 variant,
# following the dtype of the arguments (docs/python.md, "dtypes").
ELEMENT_TYPES = {
    "float32": "float", "float64": "float",
    "int64": "int64", "int32": "int32", "int16": "int16", "int8": "int8",
    "uint8": "uint8", "bool": "bool",
}


# float16 and bfloat16, computed as float32 while a module is imported with
# compute_dtype=torch.float32 (half_as_float)
HALF_TYPES = ("float16", "bfloat16")
_half_as_float = False


@contextlib.contextmanager
def half_as_float(enabled=True):
    """Within it, tenet_type gives float16 and bfloat16 the type float (float32)."""
    global _half_as_float
    before, _half_as_float = _half_as_float, enabled
    try:
        yield
    finally:
        _half_as_float = before


def tenet_type(dtype):
    """The Tenet element type of a torch dtype, or None when Tenet has none for it."""
    name = str(dtype).replace("torch.", "")
    if _half_as_float and name in HALF_TYPES:
        return "float"
    return ELEMENT_TYPES.get(name)


class Size:
    """A size expression (a SymInt of the exported graph, as Tenet text)."""

    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text


class Axis:
    """One index of a view's base tensor: ``scale * own[dim] + offset`` (dim None: the
    constant ``offset``)."""

    def __init__(self, dim, scale=1, offset=0):
        self.dim, self.scale, self.offset = dim, scale, offset

    def text(self, indices):
        if self.dim is None:
            return str(self.offset)
        index = indices[self.dim]
        if self.scale != 1:
            index = f"{self.scale}*{_paren(index)}"
        if self.offset:
            index = f"{index} + {self.offset}" if self.offset > 0 else f"{index} - {-self.offset}"
        return index


class Tensor:
    """A Tenet tensor, a view of one (``axes`` maps this value's indices to the base's),
    or a constant (``literal``: the same value at every index)."""

    def __init__(self, name, shape, dtype, axes=None, literal=None, base_shape=None):
        self.name = name
        self.shape = tuple(shape)
        self.dtype = dtype
        self.axes = axes          # None: the tensor itself
        self.literal = literal
        self.base_shape = tuple(base_shape) if axes is not None else self.shape

    def plain_ranges(self, indices):
        """{index name: size} for the indices this read ranges over a whole dimension
        of the tensor read (those range inference gets exactly from it)."""
        if self.literal is not None:
            return {}
        axes = self.axes if self.is_view else [Axis(k) for k in range(self.rank)]
        found = {}
        for axis, size in zip(axes, self.base_shape):
            if axis.dim is not None and axis.scale == 1 and axis.offset == 0:
                found.setdefault(indices[axis.dim], size)
        return found

    @property
    def rank(self):
        return len(self.shape)

    @property
    def is_view(self):
        return self.axes is not None

    def read(self, indices, guarded=False):
        """The text reading this value at ``indices`` (texts, one per dimension)."""
        assert len(indices) == self.rank, (self.name, indices, self.shape)
        if self.literal is not None:
            return self.literal
        base = [a.text(indices) for a in self.axes] if self.is_view else list(indices)
        if not base:
            return self.name
        return f"{self.name}{'?' if guarded else ''}({', '.join(base)})"

    def view(self, shape, axes):
        """A view of this value with ``shape``, whose index k of the base is axes[k]
        (composed through this value's own view)."""
        if self.literal is not None:
            return Tensor(self.name, shape, self.dtype, literal=self.literal)
        if self.is_view:
            axes = [_compose(mine, axes) for mine in self.axes]
        return Tensor(self.name, shape, self.dtype, axes=axes, base_shape=self.base_shape)


def _compose(outer, inner):
    """Base axis ``outer`` (of an index of this view) through ``inner`` (that index in
    terms of the new view's indices)."""
    if outer.dim is None:
        return outer
    through = inner[outer.dim]
    if through.dim is None:
        return Axis(None, offset=outer.scale * through.offset + outer.offset)
    return Axis(through.dim, outer.scale * through.scale,
                outer.scale * through.offset + outer.offset)


def _paren(text):
    return text if re.fullmatch(r"[A-Za-z0-9_]+", text) else f"({text})"


_FLOAT32_MAX = 3.4028234663852886e38


def literal(value, dtype=None):
    """A Python number as a Tenet literal: floats keep a '.' or an exponent, negatives
    are parenthesised."""
    if isinstance(value, bool):
        text = "1" if value else "0"
    elif isinstance(value, int):
        text = str(value)
    else:
        value = float(value)
        if value != value or value in (float("inf"), float("-inf")):
            # the language has no literal for these: a division that the compiler folds
            # (an infinity must stay one: x * inf, clamp(x, max=inf) and a -inf mask
            # before a softmax give what they give in PyTorch)
            return {"nan": "(0.0 / 0.0)", "inf": "(1.0 / 0.0)"}.get(
                repr(value), "(-1.0 / 0.0)")
        if abs(value) > _FLOAT32_MAX:
            # a float64 constant past float32's range (torch.finfo(torch.float64).min as a
            # mask): the language checks literals against float32, so the largest float32
            # of its sign stands for it (as "very large" as a mask needs; finite, so a
            # fully masked softmax row stays uniform as in PyTorch)
            value = _FLOAT32_MAX if value > 0 else -_FLOAT32_MAX
        text = repr(value)
        if "e" not in text and "." not in text:
            text += ".0"
    return f"({text})" if text.startswith("-") else text


def broadcast_indices(operand, shape, indices):
    """The indices reading ``operand`` broadcast to ``shape`` (PyTorch's rule: trailing
    dimensions align; a dimension of size 1 is read at 0)."""
    lead = len(shape) - operand.rank
    at = []
    for k, size in enumerate(operand.shape):
        at.append("0" if size == "1" and shape[lead + k] != "1" else indices[lead + k])
    return at
