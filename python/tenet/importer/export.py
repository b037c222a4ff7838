"""Capturing a module's forward with torch.export (non-strict, the batch dimension
dynamic where the model allows) and decomposing it to the Core ATen op set."""

import warnings

import torch

from .errors import TorchImportError, user_frame


def export(module, args, training, dynamic_batch):
    """The ExportedProgram of ``module(*args)`` in training or evaluation mode, decomposed
    to Core ATen. The module's own mode is restored afterwards."""
    was_training = module.training
    module.train(training)
    try:
        if dynamic_batch:
            try:
                return _export(module, args, _batch_dynamic(args))
            except Exception as dynamic_error:  # noqa: BLE001 (retried with static shapes)
                try:
                    exported = _export(module, args, None)
                except Exception:
                    raise _wrap(dynamic_error) from dynamic_error
                warnings.warn(f"tenet.from_torch: the batch dimension cannot be dynamic "
                              f"({_first_line(dynamic_error)}); the program has the example's "
                              f"fixed shapes", stacklevel=3)
                return exported
        try:
            return _export(module, args, None)
        except Exception as error:  # noqa: BLE001
            raise _wrap(error) from error
    finally:
        module.train(was_training)


def _export(module, args, dynamic_shapes):
    exported = torch.export.export(module, tuple(args), dynamic_shapes=dynamic_shapes,
                                   strict=False)
    return exported.run_decompositions(_decompositions())


def _decompositions():
    """Core ATen's table, less the one for detach: it would become an alias (the identity
    to an inference graph), and the program needs it as a stop-gradient; and less
    scaled_dot_product_attention's, which ops/attention.py translates whole (its
    decomposition views a transposed result, which fails for GPT-2 in evaluation)."""
    table = torch.export.default_decompositions()
    table.pop(torch.ops.aten.detach.default, None)
    table.pop(torch.ops.aten.scaled_dot_product_attention.default, None)
    return table


def _batch_dynamic(args):
    """Dimension 0 of every tensor argument of rank >= 1 dynamic, found automatically
    (equal batch sizes become one size; a dimension the model fixes stays static)."""
    auto = torch.export.Dim.AUTO
    return tuple({0: auto} if isinstance(a, torch.Tensor) and a.dim() > 0 else None
                 for a in args)


def _first_line(error):
    text = str(error).strip()
    line = text.splitlines()[0] if text else type(error).__name__
    return line.split(" (unhinted", 1)[0].rstrip(". ")


def _wrap(error):
    location, code = user_frame(error)
    text = str(error)
    if "data-dependent" in text or "data dependent" in text:
        what = ("torch.export cannot capture this forward: its shapes or control flow depend "
                "on tensor values (" + _first_line(error) + ")")
    else:
        what = f"torch.export cannot capture this forward: {_first_line(error)}"
    return TorchImportError(what, op=None, module_path="", location=location, code=code)
