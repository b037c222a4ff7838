"""tenet.from_torch on small models: forward outputs, every parameter gradient, the
buffers after one training step, and parameters after a few SGD steps through
Program.module(), against PyTorch (float64 within 1e-9 relative, float32 within 1e-4).
The comparison is import_models.check; `pytest -s` prints the largest difference."""

import pytest
import torch

from import_models import (LLTM, MLP, Attention, BinarisedMLP, ConvBN, EmbeddingBagModel,
                           GroupNormActivations, LeNet5, Lookups, MnistCNN, OffsetBags, Picks,
                           PairIndexing, RecurrentCells, RecurrentLayers, RunningSums, ShapeOps,
                           TinyResNet, TinyTransformer, Upsampler, check)


def _mlp():
    return MLP(), (torch.randn(4, 6), torch.tensor([0, 2, 1, 1]))


def _mnist_cnn():
    return MnistCNN(), (torch.randn(2, 1, 28, 28),)


def _lenet():
    return LeNet5(), (torch.randn(2, 1, 28, 28),)


def _lltm():
    return LLTM(), (torch.randn(3, 5), torch.randn(3, 4), torch.randn(3, 4))


def _embedding_bag():
    return EmbeddingBagModel(), (torch.randint(0, 12, (3, 5)),)


def _conv_bn():
    return ConvBN(), (torch.randn(3, 2, 6, 6),)


def _transformer():
    return TinyTransformer(), (torch.randn(2, 5, 8), torch.tensor([0, 2]))


def _recurrent():
    return RecurrentCells(), (torch.randn(2, 3, 3), torch.randn(2))


def _resnet():
    return TinyResNet(), (torch.randn(2, 3, 8, 8),)


def _attention():
    return Attention(), (torch.randn(2, 5, 4), torch.tensor([0, 2]))


def _recurrent_layers():
    return RecurrentLayers(), (torch.randn(2, 5, 3),)


def _lookups():
    return Lookups(), (torch.randn(4, 5), torch.tensor([1, 3, 3, 6]))


def _pair_indexing():
    return PairIndexing(), (torch.randn(2, 5, 6), torch.tensor([4, 0, 4]),
                            torch.tensor([5, 1]))


def _running_sums():
    return RunningSums(), (torch.randn(3, 5), torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1],
                                                            [0, 1, 1, 1, 0]]))


def _picks():
    return Picks(), (torch.randn(3, 5), torch.tensor([2, 0, 2]))


def _group_norm():
    return GroupNormActivations(), (torch.randn(3, 4, 3, 3),)


def _upsampler():
    return Upsampler(), (torch.randn(2, 2, 4, 4),)


def _shape_ops():
    return ShapeOps(), (torch.randn(2, 4, 3, 3),)


MODELS = {"mlp": _mlp, "mnist_cnn": _mnist_cnn, "lenet5": _lenet, "lltm": _lltm,
          "embedding_bag": _embedding_bag, "conv_bn": _conv_bn, "resnet": _resnet,
          "transformer": _transformer, "attention": _attention, "gru_lstm_cells": _recurrent,
          "lstm_gru_layers": _recurrent_layers, "lookups": _lookups,
          "pair_indexing": _pair_indexing, "running_sums": _running_sums,
          "picks": _picks,
          "group_norm_activations": _group_norm, "transposed_convolutions": _upsampler,
          "shape_ops": _shape_ops}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_float64_training_equals_pytorch(name):
    torch.manual_seed(0)
    model, args = MODELS[name]()
    check(model, args, dtype=torch.float64, steps=2 if name == "mnist_cnn" else 3)


@pytest.mark.parametrize("name", ["mlp", "mnist_cnn", "conv_bn"])
def test_float32_training_equals_pytorch(name):
    torch.manual_seed(1)
    model, args = MODELS[name]()
    check(model, args, dtype=torch.float32, steps=2)


def test_a_straight_through_estimator_trains_as_in_pytorch():
    torch.manual_seed(4)
    program, _ = check(BinarisedMLP(), (torch.randn(4, 6), torch.tensor([0, 2, 1, 1])))
    assert "detach(i, j) = stop_gradient(sub(i, j))" in program.source


def test_batch_norm_in_evaluation_mode_uses_the_running_statistics():
    torch.manual_seed(2)
    model, args = _conv_bn()
    with torch.no_grad():  # running statistics that are not the defaults
        for key, buffer in model.named_buffers():
            if key.endswith("running_mean"):
                buffer.uniform_(-0.5, 0.5)
            elif key.endswith("running_var"):
                buffer.uniform_(0.5, 2.0)
    check(model, args, dtype=torch.float64, training=False)


def test_embedding_bags_with_offsets():
    torch.manual_seed(6)
    tokens = torch.tensor([1, 4, 2, 2, 9, 0, 2, 7])
    offsets = torch.tensor([0, 2, 4, 4, 6])  # bags of 2, 2 (padding only), 0, 2 and 2 tokens
    check(OffsetBags(), (tokens, offsets), dtype=torch.float64)


def test_a_resnet_in_evaluation_mode():
    torch.manual_seed(5)
    model, args = _resnet()
    check(model, args, dtype=torch.float64, training=False, steps=2)


def test_the_batch_is_dynamic():
    torch.manual_seed(3)
    model, (x, label) = _mlp()
    module = __import__("tenet").from_torch(model, (x, label)).module()
    for batch in (1, 5):
        x, label = torch.randn(batch, 6), torch.randint(0, 3, (batch,))
        assert torch.allclose(module(x, label), model(x, label), rtol=1e-5, atol=1e-6)


class _Deep(torch.nn.Module):
    """More parameters than PyTorch's dispatcher takes arguments (64): a batch norm
    (2 buffers updated in training) and 36 linear layers with tanh (72 parameters)."""

    def __init__(self):
        super().__init__()
        self.norm = torch.nn.BatchNorm1d(5)
        self.layers = torch.nn.Sequential(
            *[m for _ in range(36) for m in (torch.nn.Linear(5, 5), torch.nn.Tanh())])

    def forward(self, x):
        return self.layers(self.norm(x))


def test_a_module_with_more_than_64_parameters_is_one_operator_over_lists():
    torch.manual_seed(7)
    check(_Deep(), (torch.randn(6, 5),), dtype=torch.float64, steps=2)


def test_long_batch_norm_statistics_are_summed_in_float64():
    """A float32 batch norm over 65536 values per channel with a large mean: summed
    one by one in float32, the mean would be off by about 1e-2 of the spread (the sum
    reaches 6.6e7, where float32 steps by 4 to 8); float32 sums accumulate in float64
    (ir/scatter_form.h), so the output is as exact as the float32 input allows.
    Measured: 1.5e-5 (PyTorch float32 4.3e-5); summed in float32, 3.2e-3."""
    torch.manual_seed(8)
    model = torch.nn.BatchNorm2d(3).train()
    x = 1000 + torch.randn(64, 3, 32, 32)
    program = __import__("tenet").from_torch(model, (x,))
    exact = torch.nn.functional.batch_norm(x.double(), None, None, training=True)
    got = program.module()(x).double()
    assert (got - exact).abs().max().item() < 2e-4
