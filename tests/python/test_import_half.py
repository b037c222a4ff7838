"""float16 and bfloat16 models imported with compute_dtype=torch.float32: computed in
float32 from float32 copies of their parameters, against the same model in float32."""

import copy

import pytest
import torch
import torch.nn as nn

import tenet


class CastsInside(nn.Module):
    """A forward that casts to float16 and back: computed in float32, with no rounding."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 4)

    def forward(self, x):
        return (self.fc(x).half() * 3).float().sum(1) + x.to(torch.bfloat16).mean(1).float()


def _model():
    return nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.GELU(), nn.Linear(8, 3))


def test_a_bfloat16_model_trains_in_float32():
    torch.manual_seed(0)
    model = _model().to(torch.bfloat16)
    x = torch.randn(4, 6, dtype=torch.bfloat16)
    module = tenet.from_torch(model, (x,), compute_dtype=torch.float32).module()
    reference = copy.deepcopy(model).float()
    got, want = module(x), reference(x.float())
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    got.square().sum().backward()
    want.square().sum().backward()
    for (key, ours), (_, theirs) in zip(module.named_parameters(), reference.named_parameters()):
        assert ours.dtype == torch.float32, key
        torch.testing.assert_close(ours.grad, theirs.grad, rtol=1e-4, atol=1e-6, msg=key)
    assert next(model.parameters()).dtype == torch.bfloat16  # the original is left alone


def test_casts_to_half_inside_the_forward_are_float32(tmp_path):
    torch.manual_seed(1)
    model = CastsInside()
    x = torch.randn(3, 5, dtype=torch.float16)
    program = tenet.from_torch(model, (x,), compute_dtype=torch.float32)
    want = (model.fc(x.float()) * 3).sum(1) + x.float().mean(1)
    torch.testing.assert_close(program.module()(x), want, rtol=1e-6, atol=1e-6)
    program.save(tmp_path / "half")  # the manifest keeps compute_dtype
    loaded = tenet.load(tmp_path / "half")
    torch.testing.assert_close(loaded.module()(x), want, rtol=1e-6, atol=1e-6)


def test_compute_dtype_is_float32_or_none():
    with pytest.raises(TypeError, match="compute_dtype may be torch.float32"):
        tenet.from_torch(_model(), (torch.randn(2, 6),), compute_dtype=torch.float64)
