"""What tenet.from_torch cannot import: one TorchImportError per kind, whose message
names the op, the module path and the user's Python source line (pinned here)."""

import pytest
import torch
import torch.nn as nn

import tenet

THIS = "test_import_errors.py"


class Head(nn.Module):
    def forward(self, x):
        return torch.kthvalue(x, 2, 1).values


class WithHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = Head()

    def forward(self, x):
        return self.head(x * 2)


class Branchy(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x


class Cast(nn.Module):
    def forward(self, x):
        return x.to(torch.bfloat16).sum()


class PoolIndices(nn.Module):
    def forward(self, x):
        values, indices = torch.nn.functional.max_pool2d(x, 2, return_indices=True)
        return values.sum() + indices.sum()


def _line_of(cls, text):
    import inspect
    lines, start = inspect.getsourcelines(cls)
    return start + next(k for k, line in enumerate(lines) if text in line)


def _import_error(model, *args):
    with pytest.raises(tenet.TorchImportError) as caught:
        tenet.from_torch(model, args)
    assert isinstance(caught.value, ValueError)
    return caught.value


def test_an_unsupported_op_names_the_op_the_module_and_the_line():
    error = _import_error(WithHead(), torch.randn(2, 3))
    line = _line_of(Head, "torch.kthvalue")
    assert str(error) == (
        f"{THIS}:{line}: error: unsupported op aten.kthvalue.default (the supported ops: "
        f"docs/import.md)\n  in module 'head' (Head)\n    return torch.kthvalue(x, 2, 1).values")
    assert (error.op, error.module_path, error.location) == (
        "aten.kthvalue.default", "head", f"{THIS}:{line}")


def test_data_dependent_control_flow_names_the_line():
    error = _import_error(Branchy(), torch.randn(2, 3))
    line = _line_of(Branchy, "if x.sum()")
    assert str(error) == (
        f"{THIS}:{line}: error: torch.export cannot capture this forward: its shapes or "
        f"control flow depend on tensor values (Could not guard on data-dependent expression "
        f"Eq(u0, 1))\n  in the top module\n    if x.sum() > 0:")


def test_an_unsupported_dtype_in_the_forward_names_the_op_and_the_line():
    error = _import_error(Cast(), torch.randn(2, 3))
    line = _line_of(Cast, "bfloat16")
    assert str(error) == (
        f"{THIS}:{line}: error: dtype bfloat16 is not supported (Tenet has float32, "
        f"float64, integers and bool; a float16 or bfloat16 model imports with "
        f"compute_dtype=torch.float32)\n  in the top module (Cast)\n"
        f"    return x.to(torch.bfloat16).sum()")


def test_an_unsupported_parameter_dtype_names_the_parameter():
    model = nn.Sequential(nn.Linear(3, 2)).to(torch.float16)
    error = _import_error(model, torch.randn(2, 3, dtype=torch.float16))
    assert str(error) == ("error: 0.weight has dtype float16, which Tenet does not support "
                          "(float32, float64, integers, bool; a float16 or bfloat16 model "
                          "imports with compute_dtype=torch.float32)\n  in module '0'")


def test_an_unsupported_output_of_an_op_names_the_op():
    error = _import_error(PoolIndices(), torch.randn(2, 1, 4, 4))
    line = _line_of(PoolIndices, "return_indices")
    assert str(error) == (
        f"{THIS}:{line}: error: output 1 of aten.max_pool2d_with_indices.default is not "
        f"supported (such as max pooling's indices: only the outputs a forward uses are)\n"
        f"  in the top module (PoolIndices)\n"
        f"    values, indices = torch.nn.functional.max_pool2d(x, 2, return_indices=True)")
    assert error.op == "aten.max_pool2d_with_indices.default"
