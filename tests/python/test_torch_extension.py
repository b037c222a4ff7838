"""Tenet functions as native PyTorch C++ extensions (tenet emit --target torch).

The LLTM of PyTorch's C++ extension tutorial (models/zoo/lltm.tn) is emitted,
built with CMake (find_package(Torch), the libtorch of the pip wheel) together
with a LibTorch C++ program that trains through it with no Python in the
process (examples/lltm_extension), and loaded here with torch.ops.load_library:
its operators must pass torch.library.opcheck, match PyTorch's own LLTM and
Tenet's Python operator (tenet.torch_op: the same kernels, so the same bits),
and trace under torch.compile. tests/extension/shapes.tn, built through
tenet.torch_extension (torch.utils.cpp_extension), covers the other interfaces:
integer inputs, computed and fixed sizes, an updated output, no backward.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
import torch

import tenet

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = REPO / "build-python" / "torch-extensions"
LLTM = REPO / "models" / "zoo" / "lltm.tn"
SHAPES = REPO / "tests" / "extension" / "shapes.tn"
B, I, S = 3, 4, 5


def _tool(name):
    found = shutil.which(name, path=str(pathlib.Path(sys.executable).parent)) or \
        shutil.which(name)
    assert found, f"{name} is not installed (scripts/venv.sh installs it)"
    return found


@pytest.fixture(scope="module")
def lltm_build():
    """Emits the LLTM extension, builds it and the C++ trainer with CMake; returns the
    build folder (the operators are loaded into this process once)."""
    source, build = BUILD / "lltm_ops", BUILD / "train_lltm"
    project = tenet.emit_torch_extension(LLTM, source, "lltm", namespace="lltm_ops",
                                         overwrite=True)
    assert project["operators"] == ["lltm_ops::lltm", "lltm_ops::lltm_backward"]
    subprocess.run([_tool("cmake"), "-S", str(REPO / "examples" / "lltm_extension"), "-B",
                    str(build), "-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={_tool('ninja')}",
                    f"-DLLTM_EXTENSION={source}",
                    f"-DCMAKE_PREFIX_PATH={torch.utils.cmake_prefix_path}"],
                   check=True, capture_output=True, text=True)
    built = subprocess.run([_tool("cmake"), "--build", str(build)], capture_output=True,
                           text=True)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    torch.ops.load_library(str(build / "lltm_ops" / "liblltm_ops.so"))
    return build


def lltm_inputs(dtype=torch.float32, seed=0, grad=False):
    g = torch.Generator().manual_seed(seed)
    shapes = [(B, I), (B, S), (B, S), (3 * S, S + I), (3 * S,)]
    return [torch.randn(*s, generator=g, dtype=dtype).requires_grad_(grad) for s in shapes]


def reference_lltm(x, h, cell, w, bias):
    gates = torch.cat([h, x], 1) @ w.t() + bias
    input_gate, output_gate = torch.sigmoid(gates[:, :S]), torch.sigmoid(gates[:, S:2 * S])
    new_c = cell + torch.nn.functional.elu(gates[:, 2 * S:]) * input_gate
    return torch.tanh(new_c) * output_gate, new_c


def test_a_libtorch_program_trains_through_the_operator_without_python(lltm_build):
    program = lltm_build / "train_lltm"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    run = subprocess.run([str(program)], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    f64, f32 = map(float, re.search(r"float64 (\S+), float32 (\S+)", run.stdout).groups())
    assert f64 < 1e-12 and f32 < 1e-5
    first, last = map(float, re.search(r"loss: (\S+) .* (\S+) in the last", run.stdout).groups())
    assert last < 0.5 * first
    needed = subprocess.run(["ldd", str(program)], capture_output=True, text=True).stdout
    assert "libtorch_cpu" in needed and "libpython" not in needed


def test_opcheck_forward_and_backward(lltm_build):
    op, backward = torch.ops.lltm_ops.lltm, torch.ops.lltm_ops.lltm_backward
    for dtype in (torch.float32, torch.float64):
        torch.library.opcheck(op, lltm_inputs(dtype))
        torch.library.opcheck(op, lltm_inputs(dtype, grad=True))
        cotangent = torch.randn(B, S, dtype=dtype)
        torch.library.opcheck(backward, lltm_inputs(dtype) + [cotangent, None])
        torch.library.opcheck(backward, lltm_inputs(dtype) + [cotangent, cotangent])


def test_the_same_bits_as_the_python_operator_and_pytorchs_values(lltm_build):
    inputs = lltm_inputs()
    native = torch.ops.lltm_ops.lltm(*inputs)
    python = tenet.torch_op(LLTM.read_text(), "lltm")(*inputs)
    for a, b, r in zip(native, python, reference_lltm(*inputs)):
        assert torch.equal(a, b)
        torch.testing.assert_close(a, r, rtol=1e-5, atol=1e-6)


def test_gradients_against_autograd_and_finite_differences(lltm_build):
    op = torch.ops.lltm_ops.lltm
    inputs = lltm_inputs(torch.float64, grad=True)
    assert torch.autograd.gradcheck(op, inputs)
    # only new_c is used: new_h gets no cotangent (the partial backward)
    ref = [t.detach().clone().requires_grad_() for t in inputs]
    op(*inputs)[1].pow(2).sum().backward()
    reference_lltm(*ref)[1].pow(2).sum().backward()
    for t, r in zip(inputs, ref):
        torch.testing.assert_close(t.grad, r.grad, rtol=1e-12, atol=1e-14)


def test_traces_under_torch_compile_with_dynamic_shapes(lltm_build):
    op = torch.ops.lltm_ops.lltm

    def loss(*t):
        new_h, new_c = op(*t)
        return (new_h * new_c).sum()

    compiled = torch.compile(loss, fullgraph=True, dynamic=True)
    for seed in (0, 1):
        inputs = lltm_inputs(seed=seed, grad=True)
        ref = [t.detach().clone().requires_grad_() for t in inputs]
        compiled(*inputs).backward()
        loss(*ref).backward()
        for t, r in zip(inputs, ref):
            torch.testing.assert_close(t.grad, r.grad)


def test_bad_arguments_name_the_argument(lltm_build):
    op = torch.ops.lltm_ops.lltm
    x, h, cell, w, bias = lltm_inputs()
    with pytest.raises(ValueError, match=r"lltm_ops::lltm: input 'bias': expected shape \[G\] "
                                         r"= \[15\], got \[14\]"):
        op(x, h, cell, w, bias[:14])
    with pytest.raises(TypeError, match=r"input 'x' is float64, expected float32 \(the float "
                                        r"arguments are all float32, or all float64\)"):
        op(x.double(), h, cell, w, bias)
    with pytest.raises(ValueError, match=r"input 'bias' has 2 dimensions, expected 1 \(\[G\]\)"):
        op(x, h, cell, w, bias[None])
    with pytest.raises(ValueError, match="every cotangent is None"):
        torch.ops.lltm_ops.lltm_backward(x, h, cell, w, bias, None, None)


@pytest.fixture(scope="module")
def shapes_ops():
    return tenet.torch_extension(SHAPES, namespace="shapes_ops", sizes={"M": 3},
                                 directory=BUILD / "shapes_ops",
                                 verbose=bool(os.environ.get("TENET_VERBOSE")))


def test_integer_inputs_computed_and_fixed_sizes(shapes_ops):
    src = SHAPES.read_text()
    table = torch.randn(6, 4, dtype=torch.float64, requires_grad=True)
    index = torch.tensor([5, 0, 2, 2])
    torch.testing.assert_close(shapes_ops.gather_rows(table, index), table[index])
    assert torch.autograd.gradcheck(shapes_ops.gather_rows, (table, index))
    with pytest.raises(IndexError, match="index"):
        shapes_ops.gather_rows(table, torch.tensor([6]))
    with pytest.raises(TypeError, match="input 'index' is int32, expected int64"):
        shapes_ops.gather_rows(table, index.int())
    x, w = torch.randn(2, 7, requires_grad=True), torch.randn(3, requires_grad=True)
    y = shapes_ops.window(x, w)
    torch.testing.assert_close(y, torch.nn.functional.conv1d(x[:, None], w[None, None])[:, 0])
    torch.library.opcheck(shapes_ops.window, (x, w))
    with pytest.raises(ValueError, match=r"output 'y' would have dimension L - K \+ 1 = -1 < 0"):
        shapes_ops.window(x[:, :1], w)
    v = torch.randn(5)
    assert torch.equal(shapes_ops.repeat(v), tenet.torch_op(src, "repeat", sizes={"M": 3})(v))
    torch.library.opcheck(shapes_ops.repeat, (v.requires_grad_(),))


def test_updated_outputs_and_integer_outputs(shapes_ops):
    x, y = torch.randn(4, 3, requires_grad=True), torch.randn(4, requires_grad=True)
    out = shapes_ops.accumulate(x, y)
    torch.testing.assert_close(out, y + (x * x).sum(1))
    out.sum().backward()
    torch.testing.assert_close(x.grad, 2 * x.detach())
    torch.testing.assert_close(y.grad, torch.ones(4))
    torch.library.opcheck(shapes_ops.accumulate, (x, y))
    count = shapes_ops.count_positive(x)
    assert count.dtype == torch.int64 and torch.equal(count, (x > 0).sum(1))
    with pytest.raises(AttributeError):  # no float output: nothing to differentiate
        shapes_ops.count_positive_backward


def test_emitting_refuses_what_an_operator_cannot_be():
    with pytest.raises(ValueError, match="size parameter M of 'repeat' is not the "
                                                 "size of any input dimension"):
        tenet.emit_torch_extension(SHAPES, BUILD / "refused", "repeat", namespace="refused")
    with pytest.raises(ValueError, match="namespace 'torch' is taken"):
        tenet.emit_torch_extension(SHAPES, BUILD / "refused", "window", namespace="torch")
    with pytest.raises(ValueError, match="not an identifier"):
        tenet.emit_torch_extension(SHAPES, BUILD / "refused", "window", namespace="my-ops")


def test_refuses_to_build_in_a_folder_others_can_write(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(tenet.BindError, match="others can write to it"):
        tenet.torch_extension(SHAPES, "window", namespace="untrusted_ops", directory=shared)
