"""tenet.sizes: the size expressions fake kernels evaluate, against the compiler's
own shapes (each dimension's text and tree come from the C++ SizeExpr, never parsed
again in Python)."""

import collections
import pickle

import numpy as np
import pytest

import tenet
from tenet import sizes
from tenet.sizes import Size

Decl = collections.namedtuple("Decl", "name type shape")


def test_evaluate_floors_like_the_ir():
    conv = Size("(H - 9) / 2 + 1", ("+", ("//", ("+", "H", -9), 2), 1))
    assert sizes.evaluate(conv, {"H": 20}) == 6
    assert sizes.evaluate(conv, {"H": 8}) == 0  # floor(-1 / 2) + 1
    assert sizes.evaluate(Size("2*N + 1", ("+", ("*", 2, "N"), 1)), {"N": 3}) == 7
    clip = Size("min(N, M) - max(N, 2)", ("+", ("min", "N", "M"), ("*", -1, ("max", "N", 2))))
    assert sizes.evaluate(clip, {"N": 4, "M": 3}) == -1
    assert sizes.symbols(Size("min(N, M) - 2*K", ("+", ("min", "N", "M"), ("*", -2, "K")))) \
        == {"N", "M", "K"}
    assert sizes.as_symbol(Size("N", "N")) == "N"
    assert sizes.as_symbol(Size("N + 1", ("+", "N", 1))) is None
    assert Size("N", "N") == "N" and ", ".join([Size("N", "N"), Size("4", 4)]) == "N, 4"
    assert pickle.loads(pickle.dumps(conv)).tree == conv.tree


def test_text_is_never_parsed():
    """Sizes come from the compiler as trees; text (such as ``__import__('os')``) is
    refused, not evaluated."""
    with pytest.raises(TypeError, match=r"expected a size the compiler declared"):
        sizes.evaluate("__import__('os')", {})
    with pytest.raises(TypeError, match=r"expected a size the compiler declared"):
        sizes.symbols("N")


# A strided output (y's second extent (H - K) // 2 + 1) and a where-narrowed one.
STRIDED = """
def f(float(N, H) x, float(K) w) -> (y, z) {
  y(n, i) +=! x(n, 2*i + k) * w(k)
  z(n, j) = x(n, j) + x(n, j + 1) where j in 0:H - 1
}"""


def test_the_compiler_gives_each_dimension_as_a_tree():
    f = tenet.compile(STRIDED)
    assert [(d, d.tree) for d in f.inputs[0].shape] == [("N", "N"), ("H", "H")]
    y, z = f.outputs
    assert y.shape[1].tree == ("+", ("//", ("+", "H", ("*", -1, "K")), 2), 1), y.shape[1]
    assert z.shape[1] == "H - 1" and z.shape[1].tree == ("+", "H", -1)


def test_output_shapes_agree_with_compiled_code():
    f = tenet.compile(STRIDED)
    x, w = np.ones((2, 9), np.float32), np.ones(3, np.float32)
    bound = sizes.bind(f.inputs, [x.shape, w.shape])
    assert bound == {"N": 2, "H": 9, "K": 3}
    for decl, out in zip(f.outputs, f(x, w)):
        assert tuple(sizes.evaluate(d, bound) for d in decl.shape) == out.shape


def test_bind_reports_the_input_expected_and_actual():
    n, k = Size("N", "N"), Size("K", "K")
    decls = [Decl("x", "float32", (n, k)), Decl("y", "float32", (k, Size("2*N", ("*", 2, "N"))))]
    assert sizes.bind(decls, [(3, 4), (4, 6)]) == {"N": 3, "K": 4}
    with pytest.raises(ValueError, match=r"input 'y': expected float32\[K, 2\*N\] = \[4, 6\], "
                                         r"got float32\[4, 5\]"):
        sizes.bind(decls, [(3, 4), (4, 5)])
    with pytest.raises(ValueError, match=r"input 'y': expected float32\[K, 2\*N\] = \[4, 6\], "
                                         r"got float32\[5, 6\]"):
        sizes.bind(decls, [(3, 4), (5, 6)])
