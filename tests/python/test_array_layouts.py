"""Arrays whose memory is not plain native-order, contiguous, aligned values are
converted (the tenet package) or refused (the _tenet extension), never misread; and
gradcheck never passes on NaN or infinite values."""

import numpy as np
import pytest

import tenet
from tenet import _tenet

SOFTMAX = """
def softmax(float(N, K) z) -> (p) {
  m(n) max=! z(n, k)
  e(n, k) = exp(z(n, k) - m(n))
  total(n) +=! e(n, k)
  p(n, k) = e(n, k) / total(n)
}
"""

MASKED = """
def masked(float(N) x, int32(N) mask) -> (y) {
  y(n) = x(n) * float32(mask(n))
}
"""


def rng_array(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(dtype)


def misaligned(array):
    """The same values at an address that is not a multiple of the item size."""
    buffer = bytearray(array.nbytes + 1)
    out = np.frombuffer(buffer, dtype=array.dtype, count=array.size, offset=1).reshape(array.shape)
    out[...] = array
    assert not out.flags.aligned
    return out


def layouts(array):
    """(name, array) for every unusual layout of the same values."""
    swapped = array.astype(array.dtype.newbyteorder(">" if array.dtype.isnative and
                                                     np.little_endian else "<"))
    assert not swapped.dtype.isnative
    strided = np.empty((2,) + array.shape, array.dtype)[0]
    strided[...] = array
    transposed = np.ascontiguousarray(array.T).T if array.ndim > 1 else array[::-1][::-1]
    return [("byte-swapped", swapped), ("misaligned", misaligned(array)),
            ("byte-swapped and misaligned", misaligned(swapped)),
            ("transposed", transposed), ("strided", strided)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_layout_gives_the_native_result(dtype):
    f = tenet.compile(SOFTMAX, "softmax")
    z = rng_array((3, 5), dtype, seed=1)
    want = f(z)
    for name, array in layouts(z):
        np.testing.assert_array_equal(array, z, err_msg=name)  # the same values
        got = f(array)
        assert got.dtype == want.dtype, name
        np.testing.assert_array_equal(got, want, err_msg=name)
        np.testing.assert_array_equal(f.interpret(array), f.interpret(z), err_msg=name)


def test_integer_inputs_in_every_layout():
    f = tenet.compile(MASKED)
    x = rng_array((6,), seed=2)
    mask = np.array([1, 0, 3, 0, 1, 2], np.int32)
    want = x * mask
    for name, array in layouts(mask):
        np.testing.assert_allclose(f(x, array), want, err_msg=name)


def test_the_extension_refuses_what_it_cannot_read_in_place():
    program = _tenet.CheckedProgram(SOFTMAX, "<softmax>")
    variant = _tenet.Variant("softmax")
    kernel = program.compile(variant)
    z = rng_array((3, 5), seed=3)
    cases = [
        (z.astype(">f4"), r"input 'z': numpy dtype >f4 is not in the machine's byte order"),
        (z.T.copy().T, r"input 'z': the array is not C-contiguous"),
        (misaligned(z), r"input 'z': the array's data is not aligned to its 4-byte elements"),
    ]
    for array, message in cases:
        with pytest.raises(tenet.BindError, match=message):
            program.interpret(variant, [array], {})
        with pytest.raises(tenet.BindError, match=message):
            kernel.run([array], {})


def test_gradcheck_reads_byte_swapped_inputs_right():
    src = "def f(float(N) x) -> (y) { y +=! x(n) * x(n) * x(n) }"
    x = np.array([0.5, -0.25, 2.0], np.float32)
    native = tenet.gradcheck(src, inputs=[x])
    swapped = tenet.gradcheck(src, inputs=[x.astype(">f4")])
    assert native.passed and swapped.passed, str(swapped)
    assert [c.max_abs for c in native.finite_differences] == \
        [c.max_abs for c in swapped.finite_differences]


def test_gradcheck_fails_on_a_nan_loss_or_finite_difference():
    src = "def f(float(N) x) -> (y) { y +=! log(x(n)) }"
    # log(-0.5) is NaN: the loss is NaN while the gradient 1/x is finite.
    result = tenet.gradcheck(src, inputs=[np.array([0.5, -0.5], np.float32)])
    assert not result.passed and not result, str(result)
    assert result.errors[0].startswith("the checked function is nan at the inputs"), result.errors
    assert "error: the checked function is nan" in str(result)
    assert result.finite_differences[0].problem.startswith("x[0]: gradient 2, finite differences")
    # Every compiled output is NaN too, which agrees with the interpreter but says nothing.
    assert any(c.problem == "the compiled program gives nan at []" for c in result.compiled)
    # log at 1e-7 < the step: only the finite differences are NaN.
    result = tenet.gradcheck(src, inputs=[np.array([0.5, 1e-7], np.float64)], compiled=False)
    assert not result.passed
    assert result.finite_differences[0].problem.startswith(
        "x[1]: gradient 1e+07, finite differences nan (central)")


def test_an_empty_program_defines_no_function():
    with pytest.raises(ValueError, match=r"^<string> defines no function$"):
        tenet.compile("")


def test_gradcheck_refuses_a_nan_step_or_tolerance():
    src = "def f(float(N) x) -> (y) { y +=! x(n) * x(n) }"
    with pytest.raises(tenet.BindError, match="the step must be a positive number, not nan"):
        tenet.gradcheck(src, sizes={"N": 2}, step=float("nan"))
    with pytest.raises(tenet.BindError, match="the tolerance must be a non-negative number"):
        tenet.gradcheck(src, sizes={"N": 2}, tolerance=float("nan"))
