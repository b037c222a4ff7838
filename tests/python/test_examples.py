"""The examples run, and learn: a few training steps lower the loss."""

import importlib.util
import re
import subprocess

import pytest

from conftest import MNIST_SAMPLE, REPO

torch = pytest.importorskip("torch")


def load_example(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", REPO / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lltm_example_trains():
    losses = load_example("lltm").main(steps=40, log_every=10)
    first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
    print(f"lltm example: loss {first:.4f} -> {last:.4f}")
    assert last < 0.5 * first


def test_capsnet_example_trains_with_tenet_routing():
    example = load_example("capsnet_torch")
    assert isinstance(example.SmallCapsNet().routing, example.TenetRouting)
    losses, accuracies = example.main(steps=25, batch=32, data=MNIST_SAMPLE, log_every=5)
    first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
    print(f"capsnet example: margin loss {first:.4f} -> {last:.4f}, "
          f"batch accuracy {accuracies[0]:.2f} -> {sum(accuracies[-5:]) / 5:.2f}")
    assert last < 0.7 * first


def test_overhead_script_measures_every_row(capsys):
    rows = load_example("python_overhead").measure(
        "smoke", load_example("python_overhead").ELEMENTWISE,
        [torch.ones(8).numpy(), torch.ones(8).numpy()], lambda x, y: 2 * x + y, 40, 1)
    assert len(rows) == 9 and all(us > 0 for _, us in rows)


def test_import_bnn_example_searches_emits_and_classifies_in_cpp():
    out = REPO / "build-python" / "examples" / "import_bnn"  # kept: a rerun rebuilds nothing
    result = load_example("import_bnn").main(["--quick", "--out", str(out)])
    assert result.widths == [32, 64]
    assert result.validation[result.winner] == max(result.validation.values())
    assert result.validation[result.winner] > 0.6  # it learnt, through Tenet's module
    # The C++ program, with the emitted library, classifies as the module in PyTorch does
    # (a digit may differ where a value at the edge of a sign is rounded differently).
    assert abs(result.cpp_test_accuracy - result.torch_test_accuracy) <= 0.002
    assert re.search(r"^digit 0: \d \(label 7\)$", result.cpp_output, re.M)
    assert set(result.seconds) == {"width 32", "width 64", "emit", "build", "classify"}
    linked = subprocess.run(["ldd", str(out / "build" / "classify")], capture_output=True,
                            text=True).stdout.lower()
    assert "libz" in linked and not any(name in linked for name in ("python", "torch", "tenet"))
