"""The benchmark's tables and models (bench/, docs/benchmark.md), without timing
anything: the workload table, the issue-17 targets and failure reports on made-up
measurements, and every whole model of bench/models_torch.py through
tenet.from_torch (the import the benchmark runs, at batch 2)."""

import sys

import numpy as np
import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
import bench  # noqa: E402
import report  # noqa: E402
import scaling  # noqa: E402
import workloads  # noqa: E402


def test_workload_table():
    table = workloads.all_workloads()
    names = [w.name for w in table]
    assert len(names) == len(set(names))
    assert {w.group for w in table} <= set(bench.GROUPS)
    for w in table:
        assert w.mode in ("train", "forward", "vjp")
        if w.imported:
            kind, name = w.torch_fn.split(":")
            assert kind in ("model", "layer")
            assert not w.tn_file  # filled in by the import step
        else:
            assert (REPO / w.tn_file).exists()
    # The whole models of issue 17, training and inference, and the layer rows.
    for model in ("mnist_cnn_imported", "lenet5", "mlp", "resnet20", "resnet18", "transformer"):
        assert sum(n.startswith(model + "_train_b") or n.startswith(model + "_infer_b")
                   for n in names) == 2, model
    assert sum(w.group == "layer" for w in table) == 26


def test_imported_inputs_are_the_arguments():
    """make_inputs gives exactly the module's arguments (the import step writes the rest)."""
    for w in workloads.all_workloads():
        if w.imported and w.name.startswith(("lenet5", "mnist_cnn_imported", "layer_gelu")):
            arrays = w.make_inputs(np.random.default_rng(1))
            assert sorted(arrays) == sorted(w.arg_names), w.name
            if "label" in arrays:
                assert arrays["label"].dtype == np.int64


def test_thread_counts():
    assert bench.thread_counts("2") == [2]
    assert bench.thread_counts("1,2,4,8,16") == [1, 2, 4, 8, 16]
    for bad in ("", "0", "4,2", "1,1", "two"):
        with pytest.raises(SystemExit):
            bench.thread_counts(bad)


def test_scaling_report(tmp_path):
    """The scaling tables on made-up measurements at 1, 2 and 4 threads."""
    w = next(w for w in workloads.all_workloads() if w.name == "capsnet_train_b100")
    runs = [(1, [_result("tenet", w.name, 0.8), _result("eager", w.name, 2.0)]),
            (2, [_result("tenet", w.name, 0.4), _result("eager", w.name, 1.2)]),
            (4, [_result("tenet", w.name, 0.25), _result("eager", w.name, 0.5, error="died")])]
    env = {"date": "today", "mode": "quick", "minutes": 1.0, "cpu": "cpu", "cores": 4,
           "load_start": (0.0, 0.0, 0.0), "load_end": (0.0, 0.0, 0.0)}
    text = scaling.write(str(tmp_path), env, [w], ["tenet", "eager"], runs)
    assert "| CapsNet training step, batch 100 | tenet | 800 | 400 | 250 | 3.20x | 80% |" in text
    # eager failed at 4 threads: no speed-up, the cell says so.
    assert "| CapsNet training step, batch 100 | eager | 2000 | 1200 | error |  |  |" in text
    assert "| CapsNet training step, batch 100 | eager | 2.50x | 3.00x |  |" in text
    assert (tmp_path / "scaling.png").stat().st_size > 0
    lines = (tmp_path / "scaling.jsonl").read_text().splitlines()
    assert len(lines) == 1 + 6


def test_groups():
    assert bench.select_groups("models,layers") == {"capsnet", "cnn", "model", "lltm", "layer"}
    assert bench.select_groups("") == set()
    with pytest.raises(SystemExit):
        bench.select_groups("nonsense")


def _result(framework, workload, seconds, **extra):
    r = {"framework": framework, "workload": workload, "median_s": seconds,
         "peak_rss_mib": 100.0, "rss_start_mib": 10.0, "minflt_per_step": 0.0}
    r.update(extra)
    return r


def test_issue17_targets_and_failures():
    table = {w.name: w for w in workloads.all_workloads()}
    chosen = [table[n] for n in ("mlp_train_b256", "lenet5_train_b256", "resnet20_train_b128",
                                 "layer_gelu_fwd", "layer_softmax_fwd")]
    results = [
        _result("tenet", "mlp_train_b256", 0.10),
        _result("eager", "mlp_train_b256", 0.20, peak_rss_mib=500.0, rss_start_mib=300.0),
        _result("compile", "mlp_train_b256", 0.09),
        _result("tenet", "lenet5_train_b256", 0.10, minflt_per_step=3.0),
        _result("eager", "lenet5_train_b256", 0.12, peak_rss_mib=500.0, rss_start_mib=300.0),
        _result("tenet", "resnet20_train_b128", 0.5, mismatch="Tenet and PyTorch disagree"),
        _result("eager", "resnet20_train_b128", 1.0),
        _result("tenet", "layer_gelu_fwd", 0.0105),
        _result("eager", "layer_gelu_fwd", 0.012),
        _result("script", "layer_gelu_fwd", 0.010),
        {"framework": "tenet", "workload": "layer_softmax_fwd", "stage": "import",
         "error": "tenet.from_torch failed: TorchImportError: unsupported op"},
        _result("eager", "layer_softmax_fwd", 0.01),
    ]
    text = report.issue17_targets(chosen, results)
    rows = {line.split(" | ")[0].strip("| ") + " / " + line.split(" | ")[1]: line
            for line in text.splitlines()[2:]}

    def met(prefix):
        line = next(v for k, v in rows.items() if k.startswith(prefix))
        return line.rstrip(" |").endswith("yes")

    assert met("MLP 784-1024-1024-10 training step, batch 256 / >= 1.3x")        # 2.00x
    assert not met("MLP 784-1024-1024-10 training step, batch 256 / at least")  # 0.90x
    assert not met("LeNet-5 training step, batch 256 / >= 1.3x")                 # 1.20x
    assert not met("ResNet-20")                                                  # mismatch
    assert "Tenet failed (mismatch)" in text
    assert met("GELU")                                                           # 1.05x script
    assert not met("softmax")                                                    # import error
    assert "Tenet failed (import error)" in text
    assert not met("minor page faults")                                          # lenet5: 3
    assert "lenet5_train_b256: 3" in text
    assert met("peak RSS")

    failed = report.failures(chosen, results)
    assert "unsupported op" in failed and "Tenet and PyTorch disagree" in failed
    times = report.times_table(chosen, ["tenet", "eager"], results)
    assert "**mismatch** (500)" in times and "**import error**" in times


@pytest.mark.parametrize("name", ["mnist_cnn", "lenet5", "mlp", "resnet20", "resnet18",
                                  "transformer"])
def test_models_import(torch, name):
    """Each whole model imports with its loss (the training step's program: a scalar
    loss output last) and alone (inference), as the benchmark's import step does it."""
    import models_torch
    import tenet

    shapes = {"mnist_cnn": (2, 1, 28, 28), "lenet5": (2, 1, 28, 28), "mlp": (2, 784),
              "resnet20": (2, 3, 32, 32), "resnet18": (2, 3, 64, 64), "transformer": (2, 8, 128)}
    x = torch.rand(shapes[name])
    label = torch.tensor([1, 3])
    args = (x, label)
    if name == "mnist_cnn":
        args += (torch.ones(2, 64, 12, 12), torch.ones(2, 128))
    program = tenet.from_torch(models_torch.model(name, train=True).train(), args)
    outputs = [o for o in program.signature(True)["outputs"] if o["kind"] == "user"]
    assert len(outputs) == 2  # scores, then the loss
    program = tenet.from_torch(models_torch.model(name, train=False).eval(), (x,))
    assert [o["kind"] for o in program.signature(False)["outputs"]] == ["user"]


def test_step_profile_model():
    """bench/step_profile.py: the profile lines and the model of more threads."""
    import step_profile
    regions = step_profile.parse("profile\tf\t0\t2\t0.5\t32\tconv1(b) +=! x\nother output\n")
    assert list(regions) == [("f", 0)]
    assert regions[("f", 0)].pieces == 32 and regions[("f", 0)].label == "conv1(b) +=! x"
    assert step_profile.busy(32, 16) == 16 and step_profile.busy(10, 16) == 10
    assert step_profile.busy(25, 16) == 12.5 and step_profile.busy(1, 16) == 1
    assert abs(step_profile.model(1.0, 0.5, 32, 16) - 1 / 16) < 1e-12  # all parallel
    assert step_profile.model(1.0, 1.0, 32, 16) == 1.0  # no gain at 2: serial
    assert abs(step_profile.model(1.0, 0.5, 8, 16) - 1 / 8) < 1e-12  # 8 pieces, 8 threads
    assert abs(step_profile.model(1.0, 0.75, 64, 16) - (0.5 + 0.5 / 16)) < 1e-12  # half
