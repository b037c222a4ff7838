"""Hostile input to the importer (issue 27): user text that reaches a program (class
names, module paths, parameter names, Python source lines, file names, initialiser and
option texts) stays inside its comment or is legalised or refused; Program.save is
atomic as a pair and refuses what is not a regular file; tenet.load validates the
manifest and matches weights to declarations by name and shape; tied parameters work
as in PyTorch; misuse of from_torch, emit and the imported module is a clear error."""

import copy
import importlib.util
import json
import os
import re

import numpy as np
import pytest
import torch
import torch.nn as nn

import tenet

MANIFEST_KEY = "tenet.import"  # the weights' metadata that holds the manifest

# A module written to a file whose name and lines hold control characters; its class
# name would inject a statement that zeroes the linear layer; its path and parameter
# names hold characters that are not names (a line separator, an escape, '#', '(').
HOSTILE_SOURCE = '''
import torch
from torch import nn

INJECTED = "\\n  p_q_lin(i, j) = 0 * p_q_lin(i, j)\\n#"
Inner = type("A" + INJECTED, (nn.Module,), {
    "__init__": lambda self: (nn.Module.__init__(self), setattr(self, "lin", nn.Linear(3, 4)))[0],
    "forward": lambda self, x: torch.tanh(self.lin(x)),
})
PATH = "p\u2028q"
ODD = "w\x1b# (q"


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.add_module(PATH, Inner())
        self.register_parameter(ODD, nn.Parameter(torch.randn(4)))
        self.register_parameter("\u00fcber weight", nn.Parameter(torch.randn(4)))

    def forward(self, x):
        y = getattr(self, PATH)(x) * getattr(self, ODD) * len("\x1b\x07\u2028")
        return y + getattr(self, "\u00fcber weight")
'''


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "evil name\x1b\u2028\x85.py"
    path.write_text(HOSTILE_SOURCE)
    spec = importlib.util.spec_from_file_location("evil\nmodule", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.Outer.__module__ = "evil\r\nmodule\u2028"
    torch.manual_seed(0)
    return module.Outer()


def test_user_text_stays_in_comments_and_the_import_computes_what_pytorch_does(hostile):
    x = torch.randn(5, 3)
    program = tenet.from_torch(hostile, (x,))
    for line in program.source.splitlines():
        # every line is a comment, a declaration, a statement the importer wrote, or blank
        assert "p_q_lin(i, j) = 0" not in line or line.startswith("#"), line
        assert line.isprintable() or not line, repr(line)
    assert "# p\\u2028q (A\\n  p_q_lin(i, j) = 0 * p_q_lin(i, j)\\n#)" in program.source
    assert 'len("\\x1b\\x07\\u2028")' in program.source
    assert "# evil\\r\\nmodule\\u2028.Outer, imported" in program.source
    names = [spec["name"] for spec in program.signature(True)["inputs"]]
    assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) for n in names), names
    module = program.module()
    reference = copy.deepcopy(hostile)
    got, want = module(x), reference(x)
    assert torch.allclose(got, want, rtol=1e-5, atol=1e-6)
    got.sum().backward()
    want.sum().backward()
    for (key, p), (_, q) in zip(hostile.named_parameters(), reference.named_parameters()):
        assert torch.allclose(p.grad, q.grad, rtol=1e-5, atol=1e-6), key


def test_a_line_break_in_a_parameter_or_module_name_is_a_clear_import_error():
    model = nn.Module()
    model.add_module("a\nb", nn.Linear(2, 2))
    model.forward = lambda x: getattr(model, "a\nb")(x)
    with pytest.raises(tenet.TorchImportError, match=r"the name 'a\\nb(.weight)?' holds a "
                       r"line break.*rename the submodule, parameter or buffer"):
        tenet.from_torch(model, (torch.randn(2, 2),))


def test_comment_text_escapes_every_line_break_and_control_character():
    from tenet.importer.names import comment_text
    for text in ["a\nb", "a\rb", "a\x0bb\x0cc", "a\x1cb\x1dc\x1e", "a\x85b", "a\u2028b\u2029",
                 "a\x00b", "a\x1b[2J", "trailing\\", "a\u202eb"]:
        escaped = comment_text(text)
        assert escaped.isprintable() and len(escaped.splitlines()) == 1, repr(escaped)
        assert not escaped.endswith("\\"), escaped
    assert comment_text("über (Linear)") == "über (Linear)"


# -- tied parameters, the module's arguments, empty examples ------------------------------

class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 3)
        self.b.weight = self.a.weight  # one parameter, two uses

    def forward(self, x):
        return self.b(torch.tanh(self.a(x)))


@pytest.fixture(scope="module")
def tied():
    torch.manual_seed(1)
    model = Tied().double()
    return model, tenet.from_torch(model, (torch.randn(4, 3, dtype=torch.float64),))


def test_tied_parameters_are_one_parameter_whose_gradient_sums_both_uses(tied):
    model, program = tied
    reference = copy.deepcopy(model)
    module = program.module()
    assert program.manifest["tied"] == {"b.weight": "a.weight"}
    x = torch.randn(6, 3, dtype=torch.float64)
    module(x).square().sum().backward()
    reference(x).square().sum().backward()
    assert model.b.weight is model.a.weight
    for (key, p), (_, q) in zip(model.named_parameters(), reference.named_parameters()):
        assert torch.allclose(p.grad, q.grad, rtol=1e-10, atol=1e-12), key
    assert module(torch.randn(0, 3, dtype=torch.float64)).shape == (0, 3)


def test_tied_parameters_survive_save_and_load(tied, tmp_path):
    model, program = tied
    program.save(tmp_path)
    loaded = tenet.load(tmp_path)
    module = loaded.module()
    assert module.b.weight is module.a.weight
    assert list(module.state_dict()) == list(model.state_dict())
    x = torch.randn(2, 3, dtype=torch.float64)
    assert torch.allclose(module(x), model(x), rtol=1e-10, atol=1e-12)


def test_the_module_refuses_extra_missing_and_non_tensor_arguments(tied):
    module = tied[1].module()
    x = torch.randn(2, 3, dtype=torch.float64)
    with pytest.raises(TypeError, match=r"takes 1 tensor argument \(x_in: \[B, 3\]\).*given 2"):
        module(x, x)
    with pytest.raises(TypeError, match=r"takes 1 tensor argument.*given 0"):
        module()
    with pytest.raises(TypeError, match=r"argument 0 \(x_in\) must be a tensor, not list"):
        module([[1.0, 2.0, 3.0]])


@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors")
def test_an_empty_example_is_a_clear_import_error():
    with pytest.raises(tenet.TorchImportError, match=r"example argument 0 has the shape "
                       r"\[0, 3\], with an empty dimension.*a batch of at least 2"):
        tenet.from_torch(Tied(), (torch.randn(0, 3),))
    with pytest.raises(tenet.TorchImportError, match=r"shape \[2, 0\]"):
        tenet.from_torch(nn.Linear(0, 2), (torch.randn(2, 0),))


def test_bad_arguments_to_from_torch_are_type_errors_naming_them():
    with pytest.raises(TypeError, match="example_args must be a tuple.*not NoneType"):
        tenet.from_torch(Tied(), None)
    with pytest.raises(TypeError, match="dynamic_batch must be True or False"):
        tenet.from_torch(Tied(), (torch.randn(2, 3),), dynamic_batch="yes")
    with pytest.raises(TypeError, match="takes a torch.nn.Module"):
        tenet.from_torch(lambda x: x, (torch.randn(2, 3),))


# -- Program.save and tenet.load -----------------------------------------------------------

class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.register_buffer("scale", torch.full((2,), 2.0))

    def forward(self, x):
        return self.fc(x) * self.scale


@pytest.fixture(scope="module")
def small():
    torch.manual_seed(2)
    return tenet.from_torch(Small(), (torch.randn(4, 3),))


def _rewrite_metadata(path, change):
    """weights.safetensors at ``path`` with its metadata changed by ``change(dict)``."""
    from safetensors.numpy import load_file, save_file
    from safetensors import safe_open
    with safe_open(str(path), framework="numpy") as f:
        metadata = f.metadata()
    arrays = load_file(str(path))
    change(metadata, arrays)
    save_file(arrays, str(path), metadata=metadata)


def test_load_refuses_reordered_declarations_naming_the_file_and_names(small, tmp_path):
    small.save(tmp_path)
    model = tmp_path / "model.tn"
    text = model.read_text()
    weight, bias = "    float(2, 3) fc_weight,\n", "    float(2) fc_bias,\n"
    assert weight + bias in text
    model.write_text(text.replace(weight + bias, bias + weight))
    with pytest.raises(ValueError, match=rf"{re.escape(str(model))}: small's input 0 is "
                       rf"'fc_bias', but the manifest of .*weights.safetensors has "
                       rf"'fc_weight' there"):
        tenet.load(tmp_path)


def test_load_checks_each_weight_shape_against_its_declaration(small, tmp_path):
    small.save(tmp_path)

    def widen(metadata, arrays):
        arrays["fc.bias"] = np.zeros(3, np.float32)
    _rewrite_metadata(tmp_path / "weights.safetensors", widen)
    with pytest.raises(ValueError, match=r"weights.safetensors: the tensor 'fc.bias' is "
                       r"float32 \[3\], but .*model.tn: small's input 'fc_bias' is declared "
                       r"float32 \[2\]"):
        tenet.load(tmp_path)


def _manifest_edit(field_path, value):
    def change(manifest):
        *outer, last = field_path
        target = manifest
        for part in outer:
            target = target[part]
        if value is KeyError:
            del target[last]
        else:
            target[last] = value
    return change


BAD_MANIFESTS = [
    (_manifest_edit(["entries"], KeyError), r"the field 'entries' is missing"),
    (_manifest_edit(["entries", "train"], "nowhere"), r"entries.train is 'nowhere'"),
    (_manifest_edit(["functions"], []), r"functions is \[\], not an object"),
    (_manifest_edit(["functions", "small", "inputs", 0, "kind"], "weird"),
     r"functions\['small'\].inputs\[0\].kind is 'weird'"),
    (_manifest_edit(["functions", "small", "inputs", 0, "key"], 3),
     r"functions\['small'\].inputs\[0\].key is 3, not a state_dict key"),
    (_manifest_edit(["functions", "small", "inputs", 0, "name"], "a b"),
     r"inputs\[0\].name is 'a b', not an identifier"),
    (_manifest_edit(["functions", "small", "inputs", 0, "shape"], None),
     r"inputs\[0\].shape is None, not a list"),
    (_manifest_edit(["functions", "small", "outputs", 0, "key"], "x"),
     r"outputs\[0\].key is 'x', not an argument position"),
    (_manifest_edit(["functions", "small", "results"], "[1, 2"),
     r"functions\['small'\].results is not a results structure"),
    (_manifest_edit(["state"], "fc.weight"), r"state is 'fc.weight', not a list"),
    (_manifest_edit(["parameters"], ["fc.weight", "nope"]),
     r"parameters names 'nope', which is not in 'state'"),
    (_manifest_edit(["tied"], {"fc.bias": "gone"}), r"tied\['fc.bias'\] is 'gone'"),
    (_manifest_edit(["state"], ["fc.weight", "fc.bias", "scale", "extra"]),
     r"the tensor 'extra' is missing"),
]


@pytest.mark.parametrize("change, message", BAD_MANIFESTS,
                         ids=[m[1][:30] for m in BAD_MANIFESTS])
def test_load_validates_every_manifest_field(small, tmp_path, change, message):
    small.save(tmp_path)

    def edit(metadata, arrays):
        manifest = json.loads(metadata[MANIFEST_KEY])
        change(manifest)
        metadata[MANIFEST_KEY] = json.dumps(manifest)
    _rewrite_metadata(tmp_path / "weights.safetensors", edit)
    with pytest.raises(ValueError, match=r"weights.safetensors: (metadata 'tenet.import': "
                       r"(functions\['small'\]\.)?)?" + message):
        tenet.load(tmp_path)


def test_load_refuses_bad_json_a_stray_tensor_and_a_broken_file(small, tmp_path):
    small.save(tmp_path)
    weights = tmp_path / "weights.safetensors"

    def bad_json(metadata, arrays):
        metadata[MANIFEST_KEY] = "{not json"
    _rewrite_metadata(weights, bad_json)
    with pytest.raises(ValueError, match=r"weights.safetensors: metadata 'tenet.import' is "
                       r"not JSON"):
        tenet.load(tmp_path)
    small.save(tmp_path)

    def stray(metadata, arrays):
        arrays["stray"] = np.zeros(1, np.float32)
    _rewrite_metadata(weights, stray)
    with pytest.raises(ValueError, match=r"the tensor 'stray' is not one the manifest names"):
        tenet.load(tmp_path)
    weights.write_bytes(b"\xff" * 16)
    with pytest.raises(ValueError, match=r"weights.safetensors: not a readable safetensors"):
        tenet.load(tmp_path)


def test_a_failed_save_leaves_the_previous_save_loadable(small, tied, tmp_path, monkeypatch):
    import safetensors.numpy
    tied[1].save(tmp_path)  # the previous save: another program

    def broken(*args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr(safetensors.numpy, "save_file", broken)
    with pytest.raises(OSError, match="disk full"):
        small.save(tmp_path)
    monkeypatch.undo()
    assert tenet.load(tmp_path).source == tied[1].source
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.tn", "weights.safetensors"]


def test_a_save_that_dies_between_its_renames_loads_as_the_new_save(small, tied, tmp_path,
                                                                   monkeypatch):
    tied[1].save(tmp_path)
    real_replace = os.replace

    def dies_at_the_second(source, target):
        if target.endswith("model.tn"):
            raise KeyboardInterrupt
        real_replace(source, target)
    monkeypatch.setattr(os, "replace", dies_at_the_second)
    with pytest.raises(KeyboardInterrupt):
        small.save(tmp_path)
    monkeypatch.undo()
    assert (tmp_path / "model.tn").read_text() == tied[1].source  # the old one stayed
    loaded = tenet.load(tmp_path)
    assert loaded.source == small.source
    assert torch.equal(loaded.weights["fc.bias"], small._original.fc.bias.detach())


def test_save_replaces_only_regular_files(small, tmp_path):
    os.mkfifo(tmp_path / "model.tn")
    with pytest.raises(FileExistsError, match=r"model.tn is a FIFO, not a regular file"):
        small.save(tmp_path)
    os.unlink(tmp_path / "model.tn")
    os.symlink("/dev/null", tmp_path / "weights.safetensors")
    with pytest.raises(FileExistsError, match=r"weights.safetensors is a symbolic link"):
        small.save(tmp_path)
    assert os.path.islink(tmp_path / "weights.safetensors")


def test_load_reads_only_regular_files(small, tmp_path):
    small.save(tmp_path)
    os.unlink(tmp_path / "model.tn")
    os.mkfifo(tmp_path / "model.tn")  # would be read without end
    with pytest.raises(ValueError, match=r"model.tn is not a regular file \(a FIFO\)"):
        tenet.load(tmp_path)
    os.unlink(tmp_path / "model.tn")  # as after a first save that died before its rename
    assert tenet.load(tmp_path).source == small.source  # the weights carry the program
    os.unlink(tmp_path / "weights.safetensors")
    with pytest.raises(FileNotFoundError, match=r"weights.safetensors: no such file"):
        tenet.load(tmp_path)


# -- Program.emit: names, initialisers, options --------------------------------------------

Holder = type("Holder\n# @train evil loss=x scores=y", (nn.Module,), {})


class Mnist(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)
        self.holder = Holder()
        self.holder.register_parameter("odd\x1b name", nn.Parameter(torch.zeros(10)))

    def forward(self, x):
        return self.fc(x) + getattr(self.holder, "odd\x1b name")


@pytest.fixture(scope="module")
def mnist():
    torch.manual_seed(3)
    return tenet.from_torch(Mnist(), (torch.rand(2, 784),))


def test_emit_escapes_parameter_names_in_its_comments(mnist, tmp_path):
    with pytest.warns(UserWarning, match="no default initialiser"):
        project = mnist.emit(tmp_path, name="hostile")
    text = open(project.model).read()
    assert ("# @param holder_odd__name zeros  # holder.odd\\x1b name (Holder\\n# @train "
            "evil loss=x scores=y)\n") in text
    assert [line for line in text.splitlines() if line.startswith("# @train")] == [
        line for line in text.splitlines() if line.startswith("# @train hostile_loss")]


@pytest.mark.parametrize("arguments, error, message", [
    ({"initialisers": {"fc.weight": "zeros\n# @train x"}}, ValueError,
     r"initialisers\['fc.weight'\] is 'zeros\\n# @train x'"),
    ({"initialisers": {"fc.weight": "zeros # x"}}, ValueError, r"without '#'"),
    ({"initialisers": {"fc.weight": 0}}, TypeError, r"initialisers\['fc.weight'\] must be a str"),
    ({"initialisers": ["zeros"]}, TypeError, r"initialisers must be a dict"),
    ({"options": {"optimizer": "adam lr=5"}}, ValueError,
     r"options\['optimizer'\]: 'adam lr=5' is not a value"),
    ({"options": [("lr", 1)]}, TypeError, r"options must be a dict"),
    ({"name": "a-b"}, ValueError, r"name must be an identifier"),
    ({"name": "x\n"}, ValueError, r"name must be an identifier"),
])
@pytest.mark.filterwarnings("ignore:Program.emit. PyTorch has no default initialiser")
def test_emit_refuses_text_that_would_leave_its_line(mnist, tmp_path, arguments, error, message):
    with pytest.raises(error, match=message):
        mnist.emit(tmp_path, **arguments)
    assert not any(tmp_path.iterdir())


def test_emit_refuses_tied_parameters(tmp_path):
    class TiedMnist(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(784, 784, bias=False)
            self.b = nn.Linear(784, 784, bias=False)
            self.b.weight = self.a.weight
            self.c = nn.Linear(784, 10)

        def forward(self, x):
            return self.c(self.b(self.a(x)))
    program = tenet.from_torch(TiedMnist(), (torch.rand(2, 784),))
    with pytest.raises(tenet.TorchImportError, match=r"'b.weight' is the same tensor as "
                       r"'a.weight' \(tied parameters\)"):
        program.emit(tmp_path)


def test_the_importer_reserves_the_compilers_vocabulary():
    """The importer's reserved names are the compiler's one table (ir/builtins.h, through
    _tenet.vocabulary()), not a list of its own: every builtin, keyword and type name is
    renamed, and the renamed name compiles."""
    from tenet import _tenet
    from tenet.importer.names import Namer
    vocabulary = _tenet.vocabulary()
    words = ([b["name"] for b in vocabulary["builtins"]] + vocabulary["keywords"] +
             vocabulary["types"])
    assert {"stop_gradient", "nextafter", "reshape", "float16", "uint64", "def"} <= set(words)
    assert {b["name"]: b["arity"] for b in vocabulary["builtins"]}["fma"] == 3
    namer = Namer()
    for word in words:
        name = namer(word)
        assert name != word
        tenet.compile(f"def f(float(N) {name}) -> (y) {{\n  y(i) = {name}(i)\n}}\n", "f")
