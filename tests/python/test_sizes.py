"""tenet.sizes: the size expressions fake kernels evaluate, against the compiler's
own shapes (the interface texts come from the C++ SizeExpr printer)."""

import collections

import numpy as np
import pytest

import tenet
from tenet import sizes

Decl = collections.namedtuple("Decl", "name type shape")


def test_evaluate_floors_like_the_ir():
    assert sizes.evaluate("(H - 9) / 2 + 1", {"H": 20}) == 6
    assert sizes.evaluate("(H - 9) / 2 + 1", {"H": 8}) == 0  # floor(-1 / 2) + 1
    assert sizes.evaluate("2*N + 1", {"N": 3}) == 7
    assert sizes.evaluate("min(N, M) - max(N, 2)", {"N": 4, "M": 3}) == -1
    assert sizes.symbols("min(N, M) - K*2") == {"N", "M", "K"}
    assert sizes.as_symbol("N") == "N" and sizes.as_symbol("N + 1") is None
    with pytest.raises(ValueError, match="unexpected size expression"):
        sizes.evaluate("__import__('os')", {})


def test_output_shapes_agree_with_compiled_code():
    src = """
    def f(float(N, H) x, float(K) w) -> (y, z) {
      y(n, i) +=! x(n, 2*i + k) * w(k)
      z(n, j) = x(n, j) + x(n, j + 1) where j in 0:H - 1
    }"""
    f = tenet.compile(src)
    x, w = np.ones((2, 9), np.float32), np.ones(3, np.float32)
    bound = sizes.bind(f.inputs, [x.shape, w.shape])
    assert bound == {"N": 2, "H": 9, "K": 3}
    for decl, out in zip(f.outputs, f(x, w)):
        assert tuple(sizes.evaluate(d, bound) for d in decl.shape) == out.shape


def test_bind_reports_the_input_expected_and_actual():
    decls = [Decl("x", "float32", ("N", "K")), Decl("y", "float32", ("K", "2*N"))]
    assert sizes.bind(decls, [(3, 4), (4, 6)]) == {"N": 3, "K": 4}
    with pytest.raises(ValueError, match=r"input 'y': expected float32\[K, 2\*N\] = \[4, 6\], "
                                         r"got float32\[4, 5\]"):
        sizes.bind(decls, [(3, 4), (4, 5)])
    with pytest.raises(ValueError, match=r"input 'y': expected float32\[K, 2\*N\] = \[4, 6\], "
                                         r"got float32\[5, 6\]"):
        sizes.bind(decls, [(3, 4), (5, 6)])
