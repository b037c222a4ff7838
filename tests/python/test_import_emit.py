"""Program.emit: the standalone project of an imported MNIST classifier. Its model file
(directives, PyTorch's default initialisers, the entries that wrap the imported
program, checked against PyTorch through the JIT), the built project (CMake: predict
with the module's weights gives the module's predictions, train learns from them and
from a fresh start), and what it refuses."""

import hashlib
import math
import os
import re
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import tenet
from conftest import MNIST_SAMPLE, REPO, mnist_batch

# Built projects, by a hash of their sources: a test run that emits the same project
# again builds nothing (Program.emit writes the same files wherever it emits them).
BUILDS = REPO / "build-python" / "standalone-builds"


class SmallCNN(nn.Module):
    """Convolutions with strides, dropout, flatten, log-softmax scores."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, stride=2)    # 28 -> 13
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2)   # 13 -> 6
        self.dropout = nn.Dropout(0.25)
        self.fc = nn.Linear(16 * 6 * 6, 10)

    def forward(self, x):
        x = F.relu(self.conv2(F.relu(self.conv1(x))))
        x = self.dropout(torch.flatten(x, 1))
        return F.log_softmax(self.fc(x), dim=1)


class FlatMLP(nn.Module):
    """Takes flattened images [B, 784] and returns logits."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def _images(count):
    images, labels = mnist_batch(count)
    return torch.from_numpy(images), torch.from_numpy(labels)


def _train_images(count):
    """The first training digits of the bundled sample (conftest reads the test set)."""
    import gzip
    with gzip.open(MNIST_SAMPLE / "train-images-idx3-ubyte.gz") as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)[:count]
    with gzip.open(MNIST_SAMPLE / "train-labels-idx1-ubyte.gz") as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)[:count]
    return (torch.from_numpy(images.astype(np.float32) / 255),
            torch.from_numpy(labels.astype(np.int64)))


@pytest.fixture(scope="module")
def trained_cnn():
    """A SmallCNN trained a little in PyTorch (about 80% test accuracy: still learning)."""
    torch.manual_seed(0)
    model = SmallCNN()
    images, labels = _train_images(1600)
    optimiser = torch.optim.Adam(model.parameters(), lr=0.003)
    for first in range(0, 1600, 40):
        loss = F.nll_loss(model(images[first:first + 40]), labels[first:first + 40])
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    return model.eval()


def _emit(model, example, directory, **options):
    return tenet.from_torch(model, (example,)).emit(directory, **options)


# -- the model file ------------------------------------------------------------------------

def test_the_model_file_states_the_entries_masks_and_pytorch_initialisers(trained_cnn,
                                                                          tmp_path):
    project = _emit(trained_cnn, _images(2)[0], tmp_path / "cnn", loss="nll",
                    options={"lr": 0.01, "batch": 32})
    assert project.name == "small_cnn"
    assert project.model == str(tmp_path / "cnn" / "small_cnn.tn")
    assert project.header == str(tmp_path / "cnn" / "small_cnn_train.h")
    text = open(project.model).read()
    directives = [line for line in text.splitlines() if line.startswith("# @")]
    assert directives == [
        "# @train small_cnn_loss loss=loss scores=scores",
        "# @eval small_cnn_scores scores=scores",
        "# @data image=image label=label",
        "# @dropout dropout_mask p=0.25",
        "# @param conv1_weight kaiming_uniform(fan_in=9, gain=0.577350269)  "
        "# conv1.weight (Conv2d)",
        "# @param conv1_bias uniform(-0.333333333, 0.333333333)  # conv1.bias (Conv2d)",
        "# @param conv2_weight kaiming_uniform(fan_in=72, gain=0.577350269)  "
        "# conv2.weight (Conv2d)",
        "# @param conv2_bias uniform(-0.11785113, 0.11785113)  # conv2.bias (Conv2d)",
        "# @param fc_weight kaiming_uniform(fan_in=576, gain=0.577350269)  # fc.weight (Linear)",
        "# @param fc_bias uniform(-0.0416666667, 0.0416666667)  # fc.bias (Linear)",
        "# @defaults optimizer=adam lr=0.01 batch=32 epochs=1",
    ]
    assert tenet.from_torch(trained_cnn, (_images(2)[0],)).source.rstrip() in text
    assert "  loss +=! -picked(b) / float32(B)" in text  # loss="nll"
    # the weights, by the model file's names, are the module's
    from safetensors.numpy import load_file
    saved = load_file(project.weights)
    assert sorted(saved) == sorted(k.replace(".", "_") for k in trained_cnn.state_dict())
    for key, value in trained_cnn.state_dict().items():
        assert np.array_equal(saved[key.replace(".", "_")], value.numpy()), key


@pytest.mark.parametrize("loss", ["cross_entropy", "nll"])
def test_the_entries_give_the_module_scores_and_loss(trained_cnn, tmp_path, loss):
    images, labels = _images(6)
    program = tenet.from_torch(trained_cnn, (images[:2],))
    project = program.emit(tmp_path / "cnn", loss=loss)
    source = open(project.model).read()
    params = {k.replace(".", "_"): v.numpy() for k, v in trained_cnn.state_dict().items()}
    ones = np.ones((6, 576), np.float32)  # the dropout mask of evaluation
    scores, value = tenet.compile(source, "small_cnn_loss")(
        image=images.numpy(), label=labels.numpy().astype(np.int32), dropout_mask=ones,
        **params)
    with torch.no_grad():
        expected = trained_cnn(images)
        expected_loss = (F.nll_loss(expected, labels) if loss == "nll"
                         else F.cross_entropy(expected, labels))  # of log-probabilities: the same
    np.testing.assert_allclose(scores, expected.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(value, expected_loss.item(), rtol=1e-5)
    evaluated = tenet.compile(source, "small_cnn_scores")(image=images.numpy(), **params)
    np.testing.assert_allclose(evaluated, expected.numpy(), rtol=1e-5, atol=1e-5)


def test_flat_inputs_are_reshaped_and_logits_get_the_cross_entropy(tmp_path):
    torch.manual_seed(1)
    model = FlatMLP()
    images, labels = _images(5)
    project = _emit(model, images[:2].flatten(1), tmp_path / "mlp", name="digits")
    source = open(project.model).read()
    assert "  flat = reshape(image, B, 784)" in source
    params = {k.replace(".", "_"): v.detach().numpy() for k, v in model.state_dict().items()}
    scores, value = tenet.compile(source, "digits_loss")(
        image=images.numpy(), label=labels.numpy().astype(np.int32), **params)
    with torch.no_grad():
        logits = model(images.flatten(1))
    np.testing.assert_allclose(scores, logits.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(value, F.cross_entropy(logits, labels).item(), rtol=1e-5)


# -- the built project ---------------------------------------------------------------------

def _cmake():
    found = shutil.which("cmake", path=os.path.dirname(sys.executable)) or shutil.which("cmake")
    assert found, "cmake is needed (scripts/venv.sh installs it into .venv)"
    return found


def _build(project):
    """The build folder of the emitted project (its sources hashed, weights aside)."""
    digest = hashlib.sha256()
    files = sorted(p for p in project.rglob("*") if p.is_file() and p.suffix != ".safetensors")
    for path in files:
        digest.update(str(path.relative_to(project)).encode() + b"\0" + path.read_bytes())
    cached = BUILDS / f"{project.name}-{digest.hexdigest()[:16]}"
    build = cached / "build"
    if not (build / "predict").is_file() or not (build / "train").is_file():
        for stale in BUILDS.glob(f"{project.name}-*"):
            if stale != cached:
                shutil.rmtree(stale)
        shutil.copytree(project, cached / "src", dirs_exist_ok=True)
        for command in ([_cmake(), "-S", cached / "src", "-B", build],
                        [_cmake(), "--build", build, "-j2"]):
            result = subprocess.run(command, capture_output=True, text=True)
            assert result.returncode == 0, result.stdout + result.stderr
    return build


def _run(command):
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True,
                            cwd=REPO, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _losses(output):
    return [float(line.split("loss")[1]) for line in output.splitlines()
            if line.startswith("step ")]


def test_the_built_project_predicts_like_the_module_and_trains(trained_cnn, tmp_path):
    images, labels = _images(1000)  # the sample's test digits
    project = _emit(trained_cnn, images[:2], tmp_path / "cnn", loss="nll")
    build = _build(tmp_path / "cnn")

    output = _run([build / "predict", "--weights", project.weights,
                   "--images", MNIST_SAMPLE / "t10k-images-idx3-ubyte.gz",
                   "--labels", MNIST_SAMPLE / "t10k-labels-idx1-ubyte.gz",
                   "--print", 1000, "--batch", 128])
    predicted = [int(m.group(1)) for m in re.finditer(r"^image \d+: (\d+)", output, re.M)]
    assert len(predicted) == 1000
    with torch.no_grad():
        scores = trained_cnn(images)
    expected = scores.argmax(1)
    top2 = scores.topk(2, dim=1).values
    clear = (top2[:, 0] - top2[:, 1]) > 1e-4  # float rounding may break near-ties either way
    assert clear.sum() > 990
    mismatches = [i for i in range(1000) if clear[i] and predicted[i] != expected[i]]
    assert mismatches == []
    correct = int((torch.tensor(predicted) == labels).sum())
    assert f"accuracy {correct / 10:.2f}% ({correct}/1000)" in output
    torch_correct = int((expected == labels).sum())
    assert abs(correct - torch_correct) <= int((~clear).sum())
    assert correct > 700  # the module learnt something to predict with
    print(f"emitted CNN: predict {correct / 10:.1f}%, PyTorch {torch_correct / 10:.1f}%")

    # From the module's weights: the loss starts where the module is and falls.
    with torch.no_grad():
        train_images, train_labels = _train_images(5000)
        trained_cnn.train()
        torch.manual_seed(0)
        module_loss = F.nll_loss(trained_cnn(train_images), train_labels).item()
        trained_cnn.eval()
    train = [build / "train", "--data", MNIST_SAMPLE, "--limit-test", 100, "--batch", 32]
    loaded = _losses(_run(train + ["--load", project.weights, "--steps", 60, "--log-every", 20]))
    assert len(loaded) == 3
    assert abs(loaded[0] - module_loss) < 0.35 * module_loss, (loaded, module_loss)
    assert loaded[-1] < loaded[0], loaded
    # From PyTorch's default initialisation (create): ln 10 at first, then it learns.
    fresh = _losses(_run(train + ["--steps", 60, "--log-every", 20, "--lr", 0.005]))
    assert 1.9 < fresh[0] < 2.5 and fresh[-1] < 0.8 * fresh[0], fresh
    print(f"emitted CNN: train --load loss {loaded} (module {module_loss:.3f}), "
          f"fresh {fresh}")


# -- refusals ------------------------------------------------------------------------------

class WithBatchNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 5, stride=4)  # 28 -> 6
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(144, 10)

    def forward(self, x):
        return self.fc(torch.flatten(F.relu(self.bn(self.conv(x))), 1))


class Linear10(nn.Module):
    """A linear classifier of the input's features, with a chosen number of outputs."""

    def __init__(self, features=784, classes=10):
        super().__init__()
        self.fc = nn.Linear(features, classes)

    def forward(self, x):
        return self.fc(x.flatten(1))


class TwoInputs(Linear10):
    def forward(self, x, y):
        return self.fc(x.flatten(1)) + y


class TwoOutputs(Linear10):
    def forward(self, x):
        scores = self.fc(x.flatten(1))
        return scores, scores.sum(1)


class WithConstant(Linear10):
    def forward(self, x):
        return self.fc(x.flatten(1)) * torch.tensor([1.0] * 10)


class WithMaxNorm(Linear10):
    def __init__(self):
        super().__init__()
        self.codes = nn.Embedding(10, 10, max_norm=1.0)

    def forward(self, x):
        return self.fc(x.flatten(1)) + self.codes(torch.arange(10)).sum(0)


def _image_batch(shape=(2, 1, 28, 28)):
    return torch.rand(*shape)


@pytest.mark.parametrize("model, args, options, message", [
    (WithBatchNorm(), (_image_batch(),), {},
     r"the training forward reads the buffers bn.running_mean, bn.running_var, "
     r"bn.num_batches_tracked; the project holds parameters only"
     r"(.|\n)*in module 'bn' \(BatchNorm2d\)$"),
    (TwoInputs(), (_image_batch(), torch.rand(2, 10)), {},
     r"the forward takes 2 tensor arguments; the project calls it with one"),
    (Linear10(3 * 32 * 32), (_image_batch((2, 3, 32, 32)),), {},
     r"the forward takes float32 \[B, 3, 32, 32\]; the project feeds it float32 MNIST images"),
    (Linear10(classes=5), (_image_batch(),), {},
     r"the forward returns float32 \[B, 5\], not float32 \[B, 10\] class scores"),
    (TwoOutputs(), (_image_batch(),), {},
     r"the forward returns 2 tensors; the project needs one, the class scores"),
    (Linear10(), (_image_batch(),), {"dynamic_batch": False},
     r"the program's batch size is fixed at 2; the project needs it to vary"),
    (WithMaxNorm(), (_image_batch(),), {},
     r"the training forward changes the parameters codes.weight \(an embedding's max_norm\); "
     r"the project's trainer changes parameters only by its optimiser"),
    (WithConstant(), (_image_batch(),), {},
     r"the training forward makes tensors \(c_lifted_tensor_0: torch.tensor\(...\) "
     r"or the like, which export lifts to constants\); the project holds parameters only"),
])
def test_what_the_project_cannot_serve_is_refused_before_writing(model, args, options,
                                                                message, tmp_path):
    program = tenet.from_torch(model, args, **options)
    with pytest.raises(tenet.TorchImportError, match=f"^error: cannot emit a standalone "
                                                     f"project: {message}"):
        program.emit(tmp_path / "project")
    assert not (tmp_path / "project").exists()


def test_bad_arguments_are_refused_by_name(tmp_path):
    program = tenet.from_torch(Linear10(), (_image_batch(),))
    out = tmp_path / "project"
    with pytest.raises(ValueError, match=r"loss must be one of cross_entropy, nll .* not 'mse'"):
        program.emit(out, loss="mse")
    with pytest.raises(ValueError, match=r"unknown training option 'learning_rate' \(the "
                                         r"options: optimizer, lr, "):
        program.emit(out, options={"learning_rate": 0.1})
    with pytest.raises(ValueError, match=r"name must be an identifier .* not 'my-net'"):
        program.emit(out, name="my-net")
    with pytest.raises(ValueError, match=r"initialisers: fc.kernel is not a parameter of the "
                                         r"program \(its parameters: fc.weight, fc.bias\)"):
        program.emit(out, initialisers={"fc.kernel": "zeros"})
    # a value the trainer refuses: its diagnostic, at the generated file's directive
    with pytest.raises(tenet.CompileError, match=r"linear10.tn \(generated by Program.emit\)"
                                                 r":\d+:\d+: error: .*momentum"):
        program.emit(out, options={"momentum": 1.5})
    with pytest.raises(tenet.CompileError, match=r"bad initialiser \"kaiming\(3\)\""):
        program.emit(out, initialisers={"fc_weight": "kaiming(3)"})
    assert not out.exists()


def test_existing_files_are_refused_and_unchanged_ones_kept(tmp_path):
    model = Linear10()
    program = tenet.from_torch(model, (_image_batch(),))
    out = tmp_path / "project"
    project = program.emit(out)
    with pytest.raises(tenet.BindError, match=r"already holds linear10.tn, CMakeLists.txt, "
                                              r".* and \d+ more files, which emit would "
                                              r"overwrite: .* overwrite=True"):
        program.emit(out)
    code = out / "linear10_kernels.cpp"
    before = code.stat().st_mtime_ns
    os.utime(code, ns=(before - 10**9, before - 10**9))  # as if built a second ago
    with torch.no_grad():
        model.fc.bias.add_(1.0)  # trained further: new weights, the same code
    program.emit(out, overwrite=True)
    assert code.stat().st_mtime_ns == before - 10**9  # not rewritten: nothing to rebuild
    from safetensors.numpy import load_file
    assert np.array_equal(load_file(project.weights)["fc_bias"], model.fc.bias.detach().numpy())


class Scaled(nn.Module):
    """A plain Parameter, which has no PyTorch default initialiser."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)
        self.temperature = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return self.fc(x.flatten(1)) * self.temperature


def test_parameters_without_a_pytorch_default_are_named_and_can_be_chosen(tmp_path):
    program = tenet.from_torch(Scaled(), (_image_batch(),))
    with pytest.warns(UserWarning, match=r"no default initialiser for temperature \(.*\); "
                                         r".*initialisers="):
        project = program.emit(tmp_path / "a")
    assert "# @param temperature zeros  # temperature" in open(project.model).read()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        project = program.emit(tmp_path / "b", initialisers={"temperature": "ones"})
    assert "# @param temperature ones  # temperature" in open(project.model).read()


def test_a_loaded_program_emits_the_same_project(trained_cnn, tmp_path):
    program = tenet.from_torch(trained_cnn, (_images(2)[0],))
    program.save(tmp_path / "saved")
    first = program.emit(tmp_path / "a")
    second = tenet.load(tmp_path / "saved").emit(tmp_path / "b")
    for name in ("small_cnn.tn", "small_cnn_kernels.cpp", "small_cnn_model.cpp", "weights.safetensors"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert first.name == second.name


# -- PyTorch's default initialisers --------------------------------------------------------

class ManyLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(300, 200)
        self.conv = nn.Conv2d(6, 40, 5)
        self.deconv = nn.ConvTranspose2d(40, 12, 3, groups=2)
        self.norm = nn.LayerNorm(64)
        self.group_norm = nn.GroupNorm(4, 64)
        self.embedding = nn.Embedding(100, 64)
        self.lstm = nn.LSTM(64, 48)
        self.prelu = nn.PReLU()
        self.attention = nn.MultiheadAttention(64, 4)
        self.bilinear = nn.Bilinear(30, 20, 50)


def _check_rule(rule, value):
    """That PyTorch's freshly initialised ``value`` looks drawn by the initialiser
    ``rule``: in its bounds and filling them, or equal to its constant."""
    value = value.detach().double()
    name, _, args = rule.partition("(")
    numbers = [float(a.split("=")[-1]) for a in args.rstrip(")").split(",") if a.strip()]
    if name in ("ones", "zeros", "constant"):
        fill = {"ones": 1.0, "zeros": 0.0}.get(name, numbers[0] if numbers else 0)
        assert torch.all(value == fill), rule
        return
    if name == "normal":
        assert abs(value.mean().item() - numbers[0]) < 0.1 and \
            abs(value.std().item() / numbers[1] - 1) < 0.1, rule
        return
    if name == "uniform":
        low, high = numbers
    elif name == "kaiming_uniform":
        high = numbers[1] * math.sqrt(3 / numbers[0])
        low = -high
    elif name == "xavier_uniform":
        high = math.sqrt(6 / (numbers[0] + numbers[1]))
        low = -high
    else:
        raise AssertionError(f"no check for {rule}")
    assert low - 1e-7 <= value.min().item() and value.max().item() <= high + 1e-7, rule
    if value.numel() >= 200:  # the bound, not a smaller one
        assert value.max().item() > high - 0.05 * (high - low), rule
        assert value.min().item() < low + 0.05 * (high - low), rule


def test_the_initialisers_are_pytorch_defaults():
    from tenet.importer.initialisers import default_initialisers, module_classes
    torch.manual_seed(5)
    model = ManyLayers()
    parameters = [(key, list(p.shape)) for key, p in model.named_parameters()]
    rules, guessed = default_initialisers(parameters, module_classes(model))
    assert guessed == []
    assert rules["linear.weight"] == "kaiming_uniform(fan_in=300, gain=0.577350269)"
    assert rules["deconv.bias"] == "uniform(-0.136082763, 0.136082763)"  # fan_in (12 / 2) * 3 * 3
    assert rules["lstm.weight_ih_l0"] == "uniform(-0.144337567, 0.144337567)"  # 1/sqrt(48)
    assert rules["attention.in_proj_weight"] == "xavier_uniform(fan_in=64, fan_out=192)"
    assert rules["attention.out_proj.bias"] == "zeros"
    assert rules["prelu.weight"] == "constant(0.25)"
    state = dict(model.named_parameters())
    for key, rule in rules.items():
        _check_rule(rule, state[key])
