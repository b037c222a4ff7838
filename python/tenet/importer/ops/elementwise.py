"""Element-wise ops: arithmetic with PyTorch's broadcasting and scalars, comparisons,
select, casts, activations."""

import math

from . import op
from ..values import Tensor, literal


def _unary(name, formula):
    @op(f"aten.{name}.default")
    def translate(t, x, *rest, **kwargs):
        return t.elementwise(formula, [x])
    return translate


for _name, _formula in {
        # PyTorch's relu passes no gradient at 0 and passes NaN and its gradient
        # (threshold_backward: x <= 0 ? 0 : grad); fmax's derivative gives a tie to
        # its first operand, and float32 convolutions with batch norm do produce exact
        # zeros: a ResNet's gradients were 1e-2 off.
        "relu": lambda x: f"select({x} <= 0, 0, {x})",
        "neg": lambda x: f"-{x}",
        "exp": lambda x: f"exp({x})",
        "log": lambda x: f"log({x})",
        "log1p": lambda x: f"log1p({x})",
        "expm1": lambda x: f"expm1({x})",
        "sqrt": lambda x: f"sqrt({x})",
        "rsqrt": lambda x: f"rsqrt({x})",
        "abs": lambda x: f"abs({x})",
        "tanh": lambda x: f"tanh({x})",
        "sigmoid": lambda x: f"sigmoid({x})",
        "erf": lambda x: f"erf({x})",
        "sin": lambda x: f"sin({x})",
        "cos": lambda x: f"cos({x})",
        "reciprocal": lambda x: f"1 / {x}",
        "sign": lambda x: f"select({x} != {x}, 0, sign({x}))",  # torch.sign(NaN) is 0
        "logical_not": lambda x: f"!{x}",
}.items():
    _unary(_name, _formula)


@op("aten.clone.default", "aten.alias.default", "aten.lift_fresh_copy.default",
    "aten.contiguous.default")
def identity(t, x, *rest, **kwargs):
    return x  # values are never mutated: a copy is the value itself


@op("aten._assert_tensor_metadata.default", "aten._assert_scalar.default",
    "aten.sym_constrain_range_for_size.default")
def assertion(t, *args, **kwargs):
    return None  # checks export made on the example; the program checks shapes itself


@op("aten.detach.default")
def detach(t, x):
    return t.elementwise(lambda v: f"stop_gradient({v})", [x])


def _binary(name, symbol):
    @op(f"aten.{name}.Tensor", f"aten.{name}.Scalar")
    def translate(t, a, b, alpha=1, rounding_mode=None):
        if rounding_mode is not None:
            t.fail(f"division with rounding_mode={rounding_mode!r} is not supported")
        if symbol == "/" and t.dtype() == "float" and not _any_float(a, b):
            return t.elementwise(lambda x, y: f"float32({x}) / float32({y})", [a, b])
        if alpha != 1:
            return t.elementwise(lambda x, y: f"{x} {symbol} {_number(alpha)} * {_atom(y)}", [a, b])
        return t.elementwise(lambda x, y: f"{x} {symbol} {_atom(y)}", [a, b])
    return translate


for _name, _symbol in {"add": "+", "sub": "-", "mul": "*", "div": "/"}.items():
    _binary(_name, _symbol)


@op("aten.div.Tensor_mode", "aten.div.Scalar_mode")
def div_rounding(t, a, b, rounding_mode=None):
    """Division rounded as PyTorch rounds it: 'trunc' is trunc(a / b) on floats (exactly
    PyTorch's) and C's / on integers; 'floor' on integers corrects C's / where the signs
    differ and it does not divide. Floor division of floats is refused: PyTorch's rounds
    the exact quotient (1.0 // 0.1 is 9), which floor(a / b) gets wrong, and the language
    has no fmod to do it exactly."""
    if rounding_mode is None:
        return _binary_division(t, a, b)
    if t.dtype() == "float":
        if rounding_mode == "trunc":
            return t.elementwise(lambda x, y: f"trunc({x} / {_atom(y)})", [a, b])
        t.fail("floor division of floats (rounding_mode='floor', //) is not supported")
    if rounding_mode == "trunc":
        return t.elementwise(lambda x, y: f"{x} / {_atom(y)}", [a, b])
    return t.elementwise(
        lambda x, y: f"select({x} % {_atom(y)} != 0 && ({x} < 0) != ({_atom(y)} < 0), "
                     f"{x} / {_atom(y)} - 1, {x} / {_atom(y)})", [a, b])


def _binary_division(t, a, b):
    if t.dtype() == "float" and not _any_float(a, b):
        return t.elementwise(lambda x, y: f"float32({x}) / float32({y})", [a, b])
    return t.elementwise(lambda x, y: f"{x} / {_atom(y)}", [a, b])


@op("aten.fmod.Scalar", "aten.fmod.Tensor", "aten.remainder.Scalar", "aten.remainder.Tensor")
def remainder(t, a, b):
    """Integers only: fmod is C's % (the dividend's sign); remainder takes the divisor's."""
    if t.dtype() == "float":
        t.fail("fmod and remainder of floats are not supported")
    if "fmod" in str(t.node.target):
        return t.elementwise(lambda x, y: f"{x} % {_atom(y)}", [a, b])
    return t.elementwise(lambda x, y: f"(({x} % {_atom(y)}) + {_atom(y)}) % {_atom(y)}", [a, b])


@op("aten.rsub.Scalar", "aten.rsub.Tensor")
def rsub(t, a, b, alpha=1):
    if alpha != 1:
        return t.elementwise(lambda x, y: f"{y} - {_number(alpha)} * {_atom(x)}", [a, b])
    return t.elementwise(lambda x, y: f"{y} - {_atom(x)}", [a, b])


def _comparison(name, symbol):
    @op(f"aten.{name}.Tensor", f"aten.{name}.Scalar")
    def translate(t, a, b):
        return t.elementwise(lambda x, y: f"{x} {symbol} {y}", [a, b])
    return translate


for _name, _symbol in {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">",
                       "ge": ">="}.items():
    _comparison(_name, _symbol)


@op("aten.bitwise_and.Tensor", "aten.bitwise_or.Tensor", "aten.bitwise_not.default")
def bitwise(t, a, b=None):
    """On bools only (``&``, ``|`` and ``~`` of masks): the logical ops."""
    if any(isinstance(v, Tensor) and v.dtype != "bool" for v in (a, b)):
        t.fail("bitwise ops on integers are not supported (on bool tensors they are)")
    if b is None:
        return t.elementwise(lambda x: f"!{_atom(x)}", [a])
    symbol = "&&" if "and" in str(t.node.target) else "||"
    return t.elementwise(lambda x, y: f"{_atom(x)} {symbol} {_atom(y)}", [a, b])


@op("aten.logical_and.default")
def logical_and(t, a, b):
    return t.elementwise(lambda x, y: f"{x} && {y}", [a, b])


@op("aten.logical_or.default")
def logical_or(t, a, b):
    return t.elementwise(lambda x, y: f"{x} || {y}", [a, b])


@op("aten.where.self", "aten.where.ScalarSelf", "aten.where.ScalarOther", "aten.where.Scalar")
def where(t, condition, a, b):
    return t.elementwise(lambda c, x, y: f"select({c}, {x}, {y})", [condition, a, b])


@op("aten.maximum.default")
def maximum(t, a, b):
    if t.dtype() != "float":  # integers: no NaN, no gradient
        return t.elementwise(lambda x, y: f"select({x} < {y}, {y}, {x})", [a, b])
    return t.elementwise(lambda x, y: _extremum(x, y, "<"), [a, b])


@op("aten.minimum.default")
def minimum(t, a, b):
    if t.dtype() != "float":
        return t.elementwise(lambda x, y: f"select({x} > {y}, {y}, {x})", [a, b])
    return t.elementwise(lambda x, y: _extremum(x, y, ">"), [a, b])


def _extremum(x, y, below):
    """PyTorch's maximum (``below`` '<') or minimum ('>'): NaN if either is, with the
    gradient going to both; a tie's gradient split in halves (fmax would give it all
    to its first operand and drop NaN)."""
    above = ">" if below == "<" else "<"
    return (f"select({x} {below} {y}, {y}, select({x} {above} {y}, {x}, "
            f"select({x} == {y}, 0.5 * {_atom(x)} + 0.5 * {_atom(y)}, {x} + {_atom(y)})))")


def _clamp(v, low, high, dtype="float"):
    """PyTorch's clamp: NaN stays NaN; x's gradient passes strictly inside the bounds
    only (none at a bound, none at NaN), a tensor bound's where it is the result;
    low > high gives high."""
    inside = " && ".join([f"{v} > {low}"] * (low is not None)
                         + [f"{v} < {high}"] * (high is not None))
    bounded = f"stop_gradient({v})" if dtype == "float" else v
    if low is not None:
        bounded = f"fmax({low}, {bounded})"
    if high is not None:
        bounded = f"fmin({high}, {bounded})"
    if dtype != "float":  # integers: no NaN, no gradient
        return bounded
    return f"select({inside}, {v}, select({v} != {v}, stop_gradient({v}), {bounded}))"


@op("aten.clamp_min.default")
def clamp_min(t, x, low):
    return t.elementwise(lambda v, lo: _clamp(v, lo, None, t.dtype()), [x, low])


@op("aten.clamp_max.default")
def clamp_max(t, x, high):
    return t.elementwise(lambda v, hi: _clamp(v, None, hi, t.dtype()), [x, high])


@op("aten.clamp.default")
def clamp(t, x, low=None, high=None):
    operands = [x] + [b for b in (low, high) if b is not None]

    def formula(v, *bounds):
        bounds = list(bounds)
        lo = bounds.pop(0) if low is not None else None
        hi = bounds.pop(0) if high is not None else None
        return _clamp(v, lo, hi, t.dtype())
    return t.elementwise(formula, operands)


@op("aten.pow.Tensor_Scalar")
def pow_scalar(t, x, exponent):
    if exponent == 2:
        return t.elementwise(lambda v: f"{_atom(v)} * {_atom(v)}", [x])
    if exponent in (0.5, -0.5):  # as PyTorch computes them: sqrt(-inf) is NaN, pow's inf
        return t.elementwise(lambda v: f"{'sqrt' if exponent > 0 else 'rsqrt'}({v})", [x])
    return t.elementwise(lambda v: f"pow({v}, {_number(exponent)})", [x])


@op("aten.pow.Tensor_Tensor")
def pow_tensor(t, x, y):
    return t.elementwise(lambda a, b: f"pow({a}, {b})", [x, y])


@op("aten._to_copy.default", "aten.to.dtype")
def to_copy(t, x, dtype=None, **ignored):
    target = t.dtype()
    if isinstance(x, Tensor) and x.dtype == target:
        return x
    cast = "float32" if target == "float" else target
    return t.elementwise(lambda v: f"{cast}({v})", [x])


@op("aten.scalar_tensor.default")
def scalar_tensor(t, value, dtype=None, **ignored):
    return _constant(t, value)


@op("aten.full.default")
def full(t, size, value, dtype=None, **ignored):
    return _constant(t, value)


def _constant(t, value):
    """The node's value, the same everywhere: a literal (bools as comparisons: the
    language has no true and false)."""
    dtype = t.dtype()
    text = ("(0 == 0)" if value else "(0 != 0)") if dtype == "bool" else _number(value)
    return Tensor("", t.shape(), dtype, literal=text)


@op("aten.zeros_like.default", "aten.ones_like.default", "aten.full_like.default")
def like(t, x, *args, **kwargs):
    value = {"aten.zeros_like.default": 0, "aten.ones_like.default": 1}.get(
        str(t.node.target), args[0] if args else None)
    return _constant(t, value)


@op("aten.elu.default")
def elu(t, x, alpha=1.0, scale=1.0, input_scale=1.0):
    """PyTorch's test is x <= 0 (NaN takes the linear branch, gradient and all); expm1
    reads 0 where its branch is not taken, so its derivative there is 1, not exp(inf)
    (the masked gradient 0 times inf would be NaN)."""
    def formula(v):
        negative = _scaled(f"expm1({_scaled(f'select({v} <= 0, {v}, 0)', input_scale)})",
                           alpha)
        if scale != 1:
            return f"select({v} <= 0, {_number(scale)} * {negative}, {_number(scale)} * {v})"
        return f"select({v} <= 0, {negative}, {v})"
    return t.elementwise(formula, [x])


@op("aten.leaky_relu.default")
def leaky_relu(t, x, slope=0.01):
    return t.elementwise(lambda v: f"select({v} > 0, {v}, {_number(slope)} * {v})", [x])


@op("aten.gelu.default")
def gelu(t, x, approximate="none"):
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        return t.elementwise(
            lambda v: f"0.5 * {v} * (1 + tanh({k!r} * ({v} + 0.044715 * {v} * {v} * {v})))", [x])
    return t.elementwise(lambda v: f"0.5 * {v} * (1 + erf({v} * {math.sqrt(0.5)!r}))", [x])


@op("aten.silu.default")
def silu(t, x):
    return t.elementwise(lambda v: f"{v} * sigmoid({v})", [x])


@op("aten.hardtanh.default")
def hardtanh(t, x, low=-1.0, high=1.0):
    return t.elementwise(lambda v: _clamp(v, _number(low), _number(high), t.dtype()), [x])


def _any_float(*operands):
    return any(o.dtype == "float" if isinstance(o, Tensor) else isinstance(o, float)
               for o in operands)


def _scaled(v, factor):
    return v if factor == 1 else f"{_number(factor)} * {v}"


def _number(value):
    return literal(value)


def _atom(text):
    """Parenthesised unless a read, a name or a number."""
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and ch in " +-*/<>=!&|?":
            return f"({text})"
    return text


@op("aten.copy.default")
def copy(t, x, src, non_blocking=False):
    """x's shape and dtype with src's values (broadcast): what an in-place write into a
    slice becomes after export's functionalisation (then a slice_scatter)."""
    target = t.dtype()
    cast = "float32" if target == "float" else target
    same = not isinstance(src, Tensor) or src.dtype == target
    return t.elementwise(lambda _, v: v if same else f"{cast}({v})", [x, src])
