"""tenet.train and tenet.training_options: the trainer of `tenet train` from
Python, with its options checked against the same table (train/options.h)."""

import csv

import pytest

import tenet
from conftest import MNIST_SAMPLE

# A linear classifier: compiles in seconds. Its @defaults give the options
# that have no default in the table.
LINEAR = """# @train linear loss=loss scores=scores
# @eval linear scores=scores loss=loss
# @data image=image label=label
# @param w uniform(-0.01, 0.01)
# @param bias zeros
# @defaults optimizer=sgd lr=0.1 batch=10 epochs=1
def linear(float(B, 1, 28, 28) image, int32(B) label, float(10, 28, 28) w, float(10) bias)
    -> (float(B, 10) scores, loss) {
  scores(b, k) +=! image(b, 0, y, x) * w(k, y, x)
  err(b, k) = scores(b, k) + bias(k) - select(label(b) == k, 1, 0)
  sq(b) +=! err(b, k) * err(b, k)
  loss +=! sq(b) / float32(B)
}
"""


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "linear.tn"
    path.write_text(LINEAR)
    return path


def test_the_options_table():
    options = {o.name: o for o in tenet.training_options()}
    assert list(options)[:3] == ["optimizer", "lr", "momentum"]
    assert options["momentum"].range == "a number in [0, 1]"
    assert options["momentum"].default == 0.0
    assert options["nesterov"].default is False
    assert options["shift"].default == 0 and options["shift"].range == "an integer from 0 to 27"
    assert options["seed"].default == 1
    assert options["lr"].default is None  # the model's @defaults must say
    assert options["optimizer"].choices == ("adam", "sgd", "adadelta")
    assert all(o.help for o in options.values())


def test_a_tiny_run_writes_the_run_dir_and_log(model, tmp_path):
    lines = []
    result = tenet.train(model, data=MNIST_SAMPLE, out=tmp_path / "run", batch=5, epochs=1,
                         limit_train=20, limit_test=10, lr=0.05, log_every=2,
                         on_line=lines.append)
    run = tmp_path / "run"
    assert result.run_dir == str(run)
    assert result.steps == 4 and result.epochs == 1
    assert 0.0 <= result.test_accuracy <= 1.0
    for name in ("last.safetensors", "log.csv", "model.tn"):
        assert (run / name).is_file(), name
    assert (run / "model.tn").read_text() == LINEAR
    with open(run / "log.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["split"], r["step"]) for r in rows] == [
        ("train", "2"), ("train", "4"), ("test", "4")]
    assert float(rows[0]["lr"]) == 0.05  # the keyword beat the model's lr=0.1
    # The lines `tenet train` prints: the setup names the optimiser the
    # model's @defaults chose, with the keyword's learning rate.
    assert any(line.startswith("optimizer sgd(lr=0.05, momentum=0,") for line in lines), lines
    assert lines[-1] == f"done: 4 steps; checkpoint {run}/last.safetensors"

    # A second run into the same folder is refused, unless overwrite=True.
    with pytest.raises(tenet.BindError, match=r"already holds a run \(last.safetensors\): "
                                              r"pass another out, or overwrite=True"):
        tenet.train(model, data=MNIST_SAMPLE, out=run, limit_train=20, limit_test=10,
                    quiet=True)
    again = tenet.train(model, data=MNIST_SAMPLE, out=run, overwrite=True, limit_train=20,
                        limit_test=10, quiet=True)
    assert again.steps == 2  # the model's batch=10


@pytest.mark.parametrize("options, message", [
    ({"momentum": 1.5}, "momentum must be a number in [0, 1], not '1.5'"),
    ({"lr": -1}, "lr must be a positive number, not '-1'"),
    ({"batch": 2.5}, "batch must be an integer from 1 to 1048576, not '2.5'"),
    ({"optimizer": "rmsprop"}, "optimizer must be adam, sgd or adadelta, not 'rmsprop'"),
    ({"nesterov": "yes"}, "nesterov must be true or false, not 'yes'"),
    ({"speed": 2}, "unknown training option 'speed'; the options are: optimizer, lr, momentum"),
])
def test_bad_options_fail_with_the_tables_message(model, tmp_path, options, message):
    with pytest.raises(tenet.BindError) as caught:
        tenet.train(model, data=MNIST_SAMPLE, out=tmp_path / "run", quiet=True, **options)
    assert message in str(caught.value)
    assert not (tmp_path / "run").exists()  # nothing ran


def test_a_bad_default_is_reported_at_the_directive(tmp_path):
    path = tmp_path / "linear.tn"
    path.write_text(LINEAR.replace("lr=0.1", "lr=0.1 momentum=1.5"))
    with pytest.raises(tenet.CompileError) as caught:
        tenet.train(path, data=MNIST_SAMPLE, out=tmp_path / "run", quiet=True)
    assert "linear.tn:6:43: error: 'momentum' must be a number in [0, 1], not '1.5'" in \
        str(caught.value)


def test_an_option_without_a_value_anywhere_names_it(tmp_path):
    path = tmp_path / "linear.tn"
    path.write_text(LINEAR.replace(" lr=0.1", ""))
    with pytest.raises(tenet.BindError, match="no lr given: pass lr or add lr=... to the model's"):
        tenet.train(path, data=MNIST_SAMPLE, out=tmp_path / "run", quiet=True)
    with pytest.raises(TypeError, match="option epochs must be a bool, int, float or str"):
        tenet.train(path, data=MNIST_SAMPLE, out=tmp_path / "run", epochs=[1], quiet=True)


def test_ctrl_c_stops_a_run_at_the_next_step(model, tmp_path):
    """The loop runs without the GIL and checks for Ctrl-C before each step:
    KeyboardInterrupt, promptly, and the run's files stay."""
    import signal
    import subprocess
    import sys
    import time

    log = tmp_path / "run" / "log.csv"
    run = str(tmp_path / "run")
    script = (f"import tenet\n"
              f"try:\n"
              f"    tenet.train({str(model)!r}, data={str(MNIST_SAMPLE)!r}, out={run!r},"
              f" batch=1, lr=0.001, epochs=1000, log_every=1, quiet=True)\n"
              f"except KeyboardInterrupt:\n"
              f"    print('KeyboardInterrupt')\n")
    python = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 60
        while not (log.exists() and log.read_text().count("\n") > 2):
            assert time.monotonic() < end, "the run wrote no log rows"
            assert python.poll() is None, python.communicate()
            time.sleep(0.02)
        python.send_signal(signal.SIGINT)
        out, err = python.communicate(timeout=30)
    finally:
        python.kill()
    assert out == "KeyboardInterrupt\n", err
    assert (tmp_path / "run" / "model.tn").is_file()


def test_a_diverging_run_names_the_keyword(model, tmp_path):
    with pytest.raises(tenet.BindError, match=r"try a lower learning rate \(lr\)$"):
        tenet.train(model, data=MNIST_SAMPLE, out=tmp_path / "run", lr=1e30, batch=5,
                    limit_train=20, limit_test=10, quiet=True)


def test_emit_standalone_writes_the_project_of_tenet_emit_train(model, tmp_path):
    # The build and the training run are tested in C++ (tests/training/standalone_test.cpp).
    out = tmp_path / "project"
    assert tenet.emit_standalone(model, out) == "linear"
    for name in ["CMakeLists.txt", "README.md", "linear_kernels.cpp", "linear_model.cpp", "linear_train.h",
                 "train_main.cpp", "predict_main.cpp", "train/json.cpp", "standalone/model.cpp",
                 "runtime/tenet_runtime.h"]:
        assert (out / name).is_file(), name
    header = (out / "linear_train.h").read_text()
    assert "int linear_train_step(linear_model* model, const float* images," in header
    assert '{"w", {10, 28, 28}, "uniform(-0.01, 0.01)"}' in (out / "linear_model.cpp").read_text()
    written = sum(1 for p in out.rglob("*") if p.is_file())  # 8 are named, the others counted
    with pytest.raises(tenet.BindError, match=r"already holds linear_kernels.h, linear_kernels.cpp, "
                       r"linear_model.cpp, "
                       rf"runtime/.* and {written - 8} more files, which emit would overwrite"):
        tenet.emit_standalone(model, out)
    assert tenet.emit_standalone(model, out, overwrite=True) == "linear"
