"""The Program tenet.from_torch returns: its source (a golden), save/load, and the module
back (shared parameters, state_dict, train/eval, torch.compile)."""

import pathlib

import pytest
import torch

import tenet
from import_models import MLP, ConvBN, MnistCNN

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "golden" / "import" / "mnist_cnn.tn"


def _cnn():
    torch.manual_seed(0)
    return MnistCNN(), (torch.randn(2, 1, 28, 28),)


def test_the_mnist_cnn_source_is_the_golden():
    model, args = _cnn()
    source = tenet.from_torch(model, args).source
    if GOLDEN.exists() and not __import__("os").environ.get("TENET_UPDATE_GOLDENS"):
        assert source == GOLDEN.read_text()
    else:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(source)


def test_save_and_load_give_the_same_program_and_weights(tmp_path):
    torch.manual_seed(1)
    model = ConvBN()
    x = torch.randn(3, 2, 6, 6)
    program = tenet.from_torch(model, (x,))
    program.save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.tn", "weights.safetensors"]
    loaded = tenet.load(tmp_path)
    assert loaded.source == program.source
    module = loaded.module().eval()
    assert module.state_dict().keys() == model.state_dict().keys()
    for key, value in model.state_dict().items():
        assert torch.equal(module.state_dict()[key], value), key
    model.eval()
    assert torch.allclose(module(x), model(x), rtol=1e-5, atol=1e-6)
    assert all(isinstance(p, torch.nn.Parameter) for p in module.parameters())
    assert len(list(module.parameters())) == len(list(model.parameters()))
    with torch.no_grad():  # a trained loaded module saves its own weights
        module.fc.bias.add_(1.0)
    loaded.save(tmp_path / "again")
    again = tenet.load(tmp_path / "again").module()
    assert torch.equal(again.fc.bias, module.fc.bias)


def test_load_refuses_weights_without_the_manifest(tmp_path):
    from safetensors.numpy import save_file
    import numpy as np
    (tmp_path / "model.tn").write_text("")
    save_file({"w": np.zeros(2, np.float32)}, str(tmp_path / "weights.safetensors"))
    with pytest.raises(ValueError, match="no 'tenet.import' metadata"):
        tenet.load(tmp_path)


def test_the_module_shares_the_original_parameters_and_buffers():
    torch.manual_seed(2)
    model = ConvBN()
    module = tenet.from_torch(model, (torch.randn(3, 2, 6, 6),)).module()
    assert list(module.state_dict().keys()) == list(model.state_dict().keys())
    for (k1, p1), (k2, p2) in zip(module.named_parameters(), model.named_parameters()):
        assert k1 == k2 and p1 is p2
    module(torch.randn(3, 2, 6, 6))
    assert model.bn1.num_batches_tracked.item() == 1  # the training program updated it
    module.eval()
    assert not model.bn1.training  # the children are the original's
    module(torch.randn(3, 2, 6, 6))
    assert model.bn1.num_batches_tracked.item() == 1  # evaluation leaves buffers alone


def test_the_module_works_under_torch_compile():
    torch.manual_seed(3)
    model = MLP()
    x, label = torch.randn(4, 6), torch.tensor([0, 2, 1, 1])
    module = tenet.from_torch(model, (x, label)).module()
    compiled = torch.compile(module, fullgraph=True, backend="aot_eager")
    loss = compiled(x, label)
    loss.backward()
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    expected = model(x, label)
    expected.backward()
    assert torch.allclose(loss, expected, rtol=1e-5)
    for a, b in zip(got, (p.grad for p in model.parameters())):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-6)


class WithConstants(torch.nn.Module):
    """A non-persistent buffer and a tensor made in the forward (a lifted constant)."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)
        self.register_buffer("scale", torch.tensor([2.0, 3.0]), persistent=False)

    def forward(self, x):
        return self.fc(x) * self.scale + torch.tensor([1.0, -1.0])


def test_constants_and_non_persistent_buffers_survive_save_and_load(tmp_path):
    torch.manual_seed(4)
    model = WithConstants()
    x = torch.randn(4, 3)
    program = tenet.from_torch(model, (x,))
    assert torch.equal(program.module()(x), model(x))
    program.save(tmp_path)
    module = tenet.load(tmp_path).module()
    assert torch.equal(module(x), model(x))
    module.double(), model.double()  # the constant follows the module's dtype
    assert torch.allclose(module(x.double()), model(x.double()), rtol=1e-12)
    assert list(module.state_dict()) == list(model.state_dict())  # 'scale' is not in it


def test_a_fixed_batch_when_asked_and_a_dynamic_one_by_default():
    torch.manual_seed(5)
    model = MLP()
    x, label = torch.randn(4, 6), torch.tensor([0, 2, 1, 1])
    assert "float(B, 6) x_in" in tenet.from_torch(model, (x, label)).source
    fixed = tenet.from_torch(model, (x, label), dynamic_batch=False)
    assert "float(4, 6) x_in" in fixed.source and "int64(4) label" in fixed.source


class DictResults(torch.nn.Module):
    def forward(self, x):
        return {"double": x * 2, "total": (x.sum(), x.amax())}


def test_the_module_returns_the_forward_results_structure():
    x = torch.randn(2, 3)
    got = tenet.from_torch(DictResults(), (x,)).module()(x)
    assert list(got) == ["double", "total"] and isinstance(got["total"], tuple)
    assert torch.equal(got["double"], x * 2) and torch.equal(got["total"][1], x.amax())
