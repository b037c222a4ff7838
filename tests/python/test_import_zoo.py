"""The ops real models use (zoo_models.py) against PyTorch, and `python -m tenet.zoo` on
a representative subset of torchvision's and Hugging Face's models (the whole table:
docs/import.md, "The zoo")."""

import pytest
import torch

from import_models import check
from zoo_models import Attentions, Draws, Lookups, Pools, Resampling, Scatters

torchvision = pytest.importorskip("torchvision")


def test_pools():
    check(Pools(), (torch.randn(2, 2, 9, 10),))


def test_bernoulli_draws():
    check(Draws(), (torch.randn(4, 6),))


def test_scatters_and_strided_views():
    check(Scatters(), (torch.randn(3, 6, 4), torch.randn(3, 4)))


def test_attention():
    allowed = torch.rand(5, 5) > 0.3
    allowed[2] = False  # a query that sees nothing: 0, as PyTorch's safe softmax
    check(Attentions(), (torch.randn(2, 5, 8), allowed))


def test_lookups():
    check(Lookups(), (torch.tensor([[0, 3, 9, 0], [7, 0, 2, 5]]),))


# A model of each kind of fix, small enough for CI (each imports and compiles two
# float64 programs): ceil-mode pools, padded embeddings, attention whole with an empty
# key cache, relative positions and integer minima. T5's RMS norm computes in float32
# on purpose (transformers casts to it), so its differences are float32 rounding.
def test_resampling():
    check(Resampling(), (torch.randn(2, 2, 3, 4), torch.randint(-20, 20, (5,))))


ZOO = {"squeezenet1_1": 1e-9, "hf-bert": 1e-9, "hf-gpt2": 1e-9, "hf-t5": 1e-6}


@pytest.mark.parametrize("name", ZOO)
def test_zoo(name):
    pytest.importorskip("transformers")
    from tenet import zoo
    row = zoo.run(name, batch=2, size=32, timed=False, max_parameters=150e6)
    print(row)
    assert row[1] == "yes", row
    errors = dict(zip(zoo.COLUMNS, (float(cell) for cell in row[2:2 + len(zoo.COLUMNS)])))
    assert max(errors.values()) <= ZOO[name], errors
