"""tenet.compile and friends on numpy arrays: calls, dtypes, gradients, errors."""

import os

import numpy as np
import pytest

import tenet

SOFTMAX = """
def softmax(float(N, K) z) -> (p) {
  m(n) max=! z(n, k)
  e(n, k) = exp(z(n, k) - m(n))
  total(n) +=! e(n, k)
  p(n, k) = e(n, k) / total(n)
}
"""

# Two outputs, an integer input and a scalar input; `lr` is read by name.
STEP = """
def sgd_step(float(N) w, float(N) g, int32(N) mask, float lr) -> (updated, norm) {
  updated(n) = w(n) - lr * g(n) * float32(mask(n))
  norm +=! updated(n) * updated(n)
}
"""

CONV = """
def conv(float(B, C, H, W) x, float(O, C, KH, KW) w) -> (y) {
  y(b, o, i, j) +=! x(b, c, i + ki, j + kj) * w(o, c, ki, kj)
}
"""


def softmax_reference(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def rng_array(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(dtype)


def test_numpy_in_numpy_out():
    f = tenet.compile(SOFTMAX, "softmax")
    z = rng_array((4, 7))
    p = f(z)
    assert isinstance(p, np.ndarray) and p.dtype == np.float32 and p.shape == (4, 7)
    np.testing.assert_allclose(p, softmax_reference(z.astype(np.float64)), rtol=1e-6, atol=1e-7)


def test_interface_description():
    f = tenet.compile(STEP)  # the only function is the entry
    assert f.name == "sgd_step"
    assert f.input_names == ["w", "g", "mask", "lr"]
    assert f.output_names == ["updated", "norm"]
    assert [i.type for i in f.inputs] == ["float32", "float32", "int32", "float32"]
    assert f.inputs[0].shape == ("N",) and f.inputs[3].shape == ()
    assert f.size_params == ["N"]
    assert "sgd_step(float32[N] w" in repr(f)


def test_several_outputs_keywords_and_scalars():
    f = tenet.compile(STEP, "sgd_step")
    w, g = rng_array(5, seed=1), rng_array(5, seed=2)
    mask = np.array([1, 0, 1, 1, 0], dtype=np.int32)
    updated, norm = f(w, g, lr=0.5, mask=mask)
    want = w - 0.5 * g * mask
    np.testing.assert_allclose(updated, want, rtol=1e-6)
    assert norm.shape == () and norm == pytest.approx(float((want.astype(np.float64) ** 2).sum()),
                                                      rel=1e-6)


def test_float64_arguments_run_a_float64_variant():
    f = tenet.compile(SOFTMAX, "softmax")
    z = rng_array((3, 5), np.float64, seed=3)
    p = f(z)
    assert p.dtype == np.float64
    # float64 precision, far below float32 rounding (~6e-8)
    np.testing.assert_allclose(p, softmax_reference(z), rtol=1e-14, atol=1e-15)
    assert f.kernel(True).cpp_path != f.kernel(False).cpp_path
    assert "double" in open(f.cpp_path(True)).read()


def test_non_contiguous_inputs_are_made_contiguous():
    f = tenet.compile(SOFTMAX, "softmax")
    z = rng_array((7, 4), seed=4)
    np.testing.assert_allclose(f(z.T), softmax_reference(z.T.astype(np.float64)), rtol=1e-6,
                               atol=1e-7)


def test_sizes_from_where_clauses():
    src = "def ramp(float s) -> (y) { y(i) = s * float32(i) where i in 0:M }"
    f = tenet.compile(src, sizes={"M": 4})
    np.testing.assert_array_equal(f(np.float32(2)), [0, 2, 4, 6])


def test_sizes_whose_tensors_overflow_are_refused():
    # 2^30 * 2^30 * 4 floats: 2^64 bytes, which a 64-bit size would wrap to 0.
    src = "def cube(float s) -> (y) { y(i, j, k) = s where i in 0:M, j in 0:M, k in 0:4 }"
    message = (r"tensor 'y' of shape \(1073741824, 1073741824, 4\): 4611686018427387904 elements "
               r"of 4 bytes overflow a 64-bit byte size")
    f = tenet.compile(src, sizes={"M": 2**30})
    with pytest.raises(ValueError, match=message):
        f(np.float32(1))
    with pytest.raises(ValueError, match=message):
        f.interpret(np.float32(1))


def test_interpreter_agrees_with_compiled_code():
    f = tenet.compile(CONV, "conv")
    x, w = rng_array((2, 3, 6, 5), seed=5), rng_array((4, 3, 3, 2), seed=6)
    np.testing.assert_allclose(f(x, w), f.interpret(x, w), rtol=1e-5, atol=1e-6)


def test_grad_of_a_scalar_output():
    f = tenet.compile(STEP, "sgd_step")
    g = f.grad(wrt=["w", "lr"], output="norm")
    assert g.name == "sgd_step_grad"
    assert g.output_names == ["updated", "norm", "d_w", "d_lr"]
    w, gr = rng_array(6, seed=7), rng_array(6, seed=8)
    mask = np.ones(6, dtype=np.int32)
    lr = np.float32(0.25)
    updated, norm, d_w, d_lr = g(w, gr, mask, lr)
    # norm = sum (w - lr g)^2: d_w = 2 (w - lr g), d_lr = -2 sum (w - lr g) g
    np.testing.assert_allclose(d_w, 2 * updated, rtol=1e-6)
    assert d_lr == pytest.approx(float(-2 * (updated * gr).sum()), rel=1e-5)


def test_backward_is_the_vjp_of_every_float_output():
    f = tenet.compile(SOFTMAX, "softmax")
    vjp = f.backward
    assert vjp.input_names == ["z", "d_p"] and vjp.output_names == ["p", "d_z"]
    z, d_p = rng_array((3, 6), np.float64, seed=9), rng_array((3, 6), np.float64, seed=10)
    p, d_z = vjp(z, d_p)
    want = p * (d_p - (d_p * p).sum(axis=1, keepdims=True))  # softmax's VJP
    np.testing.assert_allclose(d_z, want, rtol=1e-12, atol=1e-14)


def test_print_grad_is_source_that_compiles_to_the_same_gradient():
    text = tenet.print_grad(SOFTMAX, "softmax", vjp=True)
    assert text.startswith("#") or "def softmax_grad(" in text
    assert "def softmax_grad(" in text and "d_z" in text
    again = tenet.compile(text, "softmax_grad")
    z, d_p = rng_array((2, 5), seed=11), rng_array((2, 5), seed=12)
    for got, want in zip(again(z, d_p), tenet.compile(SOFTMAX).backward(z, d_p)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    assert tenet.compile(SOFTMAX).backward.source == text


def test_gradcheck_passes_and_reports_both_checks():
    result = tenet.gradcheck(CONV, "conv", sizes={"B": 1, "C": 2, "H": 5, "W": 4, "O": 2,
                                                  "KH": 2, "KW": 3}, vjp=True)
    assert result.passed, str(result)
    assert [c.input for c in result.finite_differences] == ["x", "w"]
    assert all(c.checked > 0 and c.max_rel < 1e-6 for c in result.finite_differences)
    assert [c.name for c in result.compiled] == ["y", "d_x", "d_w"]
    assert "central differences" in str(result) and "compiled" in str(result)


def test_gradcheck_on_given_inputs_warns_at_a_kink():
    # fmax at a tie: one-sided derivatives differ, so the entry is a kink warning, not a failure
    src = "def relu(float(N) x) -> (y) { y(n) = fmax(x(n), 0) }"
    result = tenet.gradcheck(src, inputs=[np.array([0.0, 0.5, -0.5], np.float32)], vjp=True)
    assert result.passed and result.warnings and "x[0]" in result.warnings[0]
    with pytest.raises(ValueError, match=r"size parameter 'N' is not bound: pass sizes="):
        tenet.gradcheck(src, vjp=True)


# -- errors -------------------------------------------------------------------------------

def test_compile_error_has_line_column_and_caret():
    src = "def f(float(N) x) -> (y) {\n  y(n) = x(n) + q(n)\n}\n"
    with pytest.raises(tenet.CompileError) as e:
        tenet.compile(src, "f", filename="bad.tn")
    message = str(e.value)
    assert message.startswith("bad.tn:2:17: error:") and "'q'" in message
    lines = message.splitlines()
    assert lines[1].strip() == "y(n) = x(n) + q(n)"
    assert lines[2].index("^") == lines[1].index("q")


def test_syntax_error_is_a_compile_error():
    with pytest.raises(tenet.CompileError, match=r"<string>:1:\d+: error: "):
        tenet.compile("def f(float(N) x) -> (y) { y(n + 1) = x(n) }", "f")


def test_unknown_entry_lists_the_functions():
    with pytest.raises(tenet.CompileError, match=r"no function named 'nope' \(functions: sgd_step\)"):
        tenet.compile(STEP, "nope")


def test_bad_gradient_request_points_at_the_source():
    f = tenet.compile(SOFTMAX, "softmax")
    with pytest.raises(tenet.CompileError, match="cannot differentiate non-scalar output 'p'"):
        f.grad()
    with pytest.raises(tenet.CompileError, match="integer input 'mask'"):
        tenet.compile(STEP).grad(wrt=["mask"], output="norm")


def test_unknown_target():
    with pytest.raises(ValueError, match="unknown target 'opencl'"):
        tenet.compile(SOFTMAX, "softmax", target="opencl")


def test_shape_mismatch_names_the_input_with_expected_and_actual():
    f = tenet.compile(STEP, "sgd_step")
    with pytest.raises(tenet.BindError) as e:
        f(rng_array(4), rng_array(5), np.ones(4, np.int32), np.float32(1))
    assert str(e.value) == "input 'g': expected float32[N] = [4], got float32[5]"
    assert isinstance(e.value, ValueError)


def test_wrong_dtype_rank_count_and_kind():
    f = tenet.compile(STEP, "sgd_step")
    w, mask = rng_array(3), np.ones(3, np.int32)
    with pytest.raises(TypeError, match=r"argument 'mask': expected dtype int32, got int64"):
        f(w, w, mask.astype(np.int64), 1.0)
    with pytest.raises(TypeError, match=r"argument 'g': expected dtype float32 \(argument 'w' "
                                        r"is float32\), got float64"):
        f(w, w.astype(np.float64), mask, 1.0)
    with pytest.raises(TypeError, match=r"argument 'w': expected dtype float32 \(or float64\), "
                                        r"got float16"):
        f(w.astype(np.float16), w, mask, 1.0)
    with pytest.raises(ValueError, match=r"argument 'g': expected rank 1 \(float32\[N\]\), got "
                                         r"rank 2 \(shape \[3, 1\]\)"):
        f(w, w[:, None], mask, 1.0)
    with pytest.raises(TypeError, match=r"sgd_step\(\) missing argument 'lr'"):
        f(w, w, mask)
    with pytest.raises(TypeError, match=r"sgd_step\(\) takes 4 arguments \(w, g, mask, lr\), got 5"):
        f(w, w, mask, 1.0, 2.0)
    with pytest.raises(TypeError, match=r"unexpected argument 'rate'"):
        f(w, w, mask, rate=1.0)
    with pytest.raises(TypeError, match=r"argument 'w': expected a numpy array or torch tensor "
                                        r"\(float32\[N\]\), got list"):
        f([1.0, 2.0, 3.0], w, mask, 1.0)


def test_unbound_size_parameter_is_a_bind_error():
    src = "def ramp(float s) -> (y) { y(i) = s * float32(i) where i in 0:M }"
    with pytest.raises(tenet.BindError, match="M"):
        tenet.compile(src)(np.float32(1))


def test_generated_code_reads_the_packaged_runtime_headers():
    runtime = tenet._tenet.runtime_dir()
    assert os.path.isfile(os.path.join(runtime, "tenet_runtime.h"))
    assert os.path.isfile(os.path.join(runtime, "tenet_gemm.h"))


@pytest.mark.parametrize("sizes, error, message", [
    ({"M": 2.5}, TypeError, r"sizes: 'M' must be an integer, got 2\.5 \(float\)"),
    ({"M": "3"}, TypeError, r"sizes: 'M' must be an integer, got '3' \(str\)"),
    ({"M": True}, TypeError, r"sizes: 'M' must be an integer, got True \(bool\)"),
    ({3: 2}, TypeError, r"sizes: a size parameter's name must be a string, got 3"),
    ([("M", 2)], TypeError, r"sizes: expected a dict of size parameter names to integers"),
    ({"M": 2**70}, ValueError, r"sizes: 'M' = 1180591620717411303424 is outside \[0, 2\^63\)"),
    ({"M": -1}, ValueError, r"sizes: 'M' = -1 is outside \[0, 2\^63\)"),
    ({"Q": 3}, ValueError, r"sizes: 'ramp' has no size parameter 'Q' \(its size parameters: M\)"),
])
def test_bad_sizes_are_errors_naming_the_entry(sizes, error, message):
    # They reached the extension, where pybind11 listed its argument types instead.
    src = "def ramp(float s) -> (y) { y(i) = s * float32(i) where i in 0:M }"
    with pytest.raises(error, match=message):
        tenet.compile(src, sizes=sizes)
    np.testing.assert_array_equal(tenet.compile(src, sizes={"M": np.int64(2)})(np.float32(1)),
                                  [0, 1])


def test_gradcheck_checks_sizes_too():
    src = "def ramp(float s) -> (y) { y(i) = s * float32(i) where i in 0:M }"
    with pytest.raises(TypeError, match=r"sizes: 'M' must be an integer, got 2\.5 \(float\)"):
        tenet.gradcheck(src, sizes={"M": 2.5})


@pytest.mark.parametrize("call, error, message", [
    (lambda: tenet.compile(123), TypeError,
     r"source \(the program's text\) must be a string, got int 123"),
    (lambda: tenet.compile(SOFTMAX, 5), TypeError,
     r"entry \(a function's name\) must be a string, got int 5"),
    (lambda: tenet.compile(SOFTMAX, filename=3), TypeError, r"filename must be a string, got int"),
    (lambda: tenet.compile(SOFTMAX, cache_dir=5), TypeError, r"cache_dir must be a string"),
    (lambda: tenet.compile(SOFTMAX, cxx=["g++"]), TypeError, r"cxx must be a string, got list"),
    (lambda: tenet.compile(SOFTMAX, index_checks="no"), TypeError,
     r"index_checks must be True or False, got str 'no'"),
    (lambda: tenet.compile(SOFTMAX).grad(wrt=[3]), TypeError,
     r"wrt \(input names\) must be a string, got int 3"),
])
def test_misused_arguments_are_errors_naming_the_argument(call, error, message):
    # pybind11's list of argument types, or a silently wrong option, before.
    with pytest.raises(error, match=message):
        call()


def test_wrt_may_name_one_input():
    # a string was taken as a list of one-letter names
    f = tenet.compile("def dot(float(N) ab, float(N) b) -> (s) { s +=! ab(i) * b(i) }")
    g = f.grad(wrt="ab")
    assert g.output_names == ["s", "d_ab"]


def test_gradients_are_marked_with_their_inputs():
    """Each gradient output names its input (TensorDecl.gradient_of, set by AD), whatever
    its name: w's gradient cannot be named d_w beside an input d_w."""
    src = "def f(float(N) w, float(N) d_w) -> (loss) {\n  loss +=! w(i) * w(i) + 3 * d_w(i)\n}\n"
    f = tenet.compile(src, "f")
    assert [o.gradient_of for o in f.outputs] == [None]
    g = f.grad()
    assert g.output_names[1] != "d_w" and g.output_names[2] == "d_d_w"
    assert [o.gradient_of for o in g.outputs] == [None, 0, 1]
    w = np.array([1, 2], dtype=np.float32)
    outputs = g(w, np.zeros(2, dtype=np.float32))
    np.testing.assert_allclose(outputs[1], 2 * w)
    np.testing.assert_allclose(outputs[2], [3, 3])


def test_the_default_entry_is_the_one_def_no_other_calls():
    """Without an entry, the CLI's rule (driver::default_entry): the one def that no other
    def calls, so a program of helpers and one model needs no name."""
    helper = "def twice(float(N) x) -> (y) {\n  y(i) = 2 * x(i)\n}\n"
    model = "def model(float(N) x) -> (z) {\n  y = twice(x)\n  z(i) = y(i) + 1\n}\n"
    f = tenet.compile(helper + model)
    assert f.name == "model"
    np.testing.assert_allclose(f(np.array([1, 2], np.float32)), [3, 5])
    other = "def other(float(N) x) -> (w) {\n  w(i) = -x(i)\n}\n"
    with pytest.raises(ValueError, match=r"^<string> has several entry functions \(model, "
                                         r"other\): name one with entry=NAME$"):
        tenet.compile(helper + model + other)
    assert tenet.compile(helper + model + other, "other").name == "other"


@pytest.mark.parametrize("given, expected", [({}, "3000"), ({"GOMP_SPINCOUNT": "77"}, "77"),
                                              ({"OMP_WAIT_POLICY": "passive"}, None)])
def test_import_settles_how_idle_openmp_threads_wait(given, expected):
    """As the tenet CLI (runtime/tenet_parallel.h): idle OpenMP threads spin 3,000
    rounds unless the user chose; set before the extension loads libgomp."""
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    env.update(given)
    out = subprocess.run([sys.executable, "-c", "import os, tenet; "
                          "print(os.environ.get('GOMP_SPINCOUNT'))"],
                         env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == str(expected)
