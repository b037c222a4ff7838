"""Importing PyTorch modules: ``tenet.from_torch(module, example_args)`` exports the
module's forward with torch.export, translates the Core ATen graph into one Tenet
program, and returns a ``Program`` (its ``source``, ``save``, ``module()``, ``emit``);
see docs/import.md."""

import copy
import re

import torch
from torch.utils import _pytree as pytree

from ..function import load as load_program
from .errors import TorchImportError
from .export import export
from .initialisers import module_classes
from .program import Program, load
from .standalone import StandaloneProject
from .names import Namer, comment_text
from .translate import Translator
from .values import HALF_TYPES, half_as_float, tenet_type

__all__ = ["Program", "StandaloneProject", "TorchImportError", "from_torch", "load"]


def from_torch(module, example_args, *, dynamic_batch=True, compute_dtype=None):
    """Translates ``module``'s forward at ``example_args`` (a tuple of tensors) into a
    Tenet ``Program``: one function for training mode and one for evaluation mode (one
    function when the two are the same). Raises TorchImportError for what cannot be
    translated, naming the op, the module path and the user's source line.

    ``compute_dtype=torch.float32`` imports a float16 or bfloat16 model computed in
    float32: its parameters and buffers of those dtypes become float32 copies (the
    program's module holds these, not the original's), arguments of those dtypes are
    converted on entry, and casts to them inside the forward are float32 (no rounding)."""
    if compute_dtype not in (None, torch.float32):
        raise TypeError(f"from_torch: compute_dtype may be torch.float32 (a float16 or "
                        f"bfloat16 model computed in float32) or None, not {compute_dtype!r}")
    if compute_dtype is not None:
        module, example_args = _in_float32(module, example_args)
        with half_as_float():
            program = from_torch(module, example_args, dynamic_batch=dynamic_batch)
        program.manifest["compute_dtype"] = "float32"
        return program
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"from_torch takes a torch.nn.Module, got {type(module).__name__}")
    if isinstance(example_args, torch.Tensor):
        example_args = (example_args,)
    if not isinstance(example_args, (tuple, list)):
        raise TypeError(f"from_torch: example_args must be a tuple of the forward's "
                        f"arguments (tensors), such as (torch.randn(2, 1, 28, 28),), not "
                        f"{type(example_args).__name__}")
    if not isinstance(dynamic_batch, bool):
        raise TypeError(f"from_torch: dynamic_batch must be True or False, not "
                        f"{dynamic_batch!r}")
    example_args = tuple(example_args)
    _check_names(module)
    _check_dtypes(module, example_args)
    _check_sizes(example_args)
    base = _function_name(module)
    train, evaluate = (_translate(module, example_args, training, dynamic_batch, f"{base}_{mode}")
                       for mode, training in (("train", True), ("eval", False)))
    if train.body() == evaluate.body() and \
            train.signature().replace("_train(", "_eval(") == evaluate.signature():
        train.function_name = base  # no dropout, no batch norm: one function serves both
        functions = {base: train}
        entries = {"train": base, "eval": base}
    else:
        functions = {train.function_name: train, evaluate.function_name: evaluate}
        entries = {"train": train.function_name, "eval": evaluate.function_name}
    source = _header(module, entries) + "\n".join(t.source() for t in functions.values())
    load_program(source, "model.tn")  # checks it now: an error here is the importer's
    weights = {key: value.detach().clone() for key, value in _state(module).items()}
    weights.update(_constants(functions))
    state_keys = list(module.state_dict())
    non_persistent = [key for key, _ in module.named_buffers(remove_duplicate=False)
                      if key not in state_keys]
    manifest = {
        "entries": entries,
        "functions": {name: _signature(t) for name, t in functions.items()},
        "parameters": [key for key, _ in module.named_parameters()],
        "non_persistent": non_persistent,
        "state": state_keys + non_persistent,  # the module's order
        "modules": module_classes(module),  # for Program.emit's default initialisers
        "tied": _tied(module),
    }
    return Program(source, manifest, weights, original=module)


def _translate(module, example_args, training, dynamic_batch, name):
    translator = Translator(export(module, example_args, training, dynamic_batch), name)
    translator.run()
    return translator


def _constants(functions):
    """The tensors the forwards make (``torch.tensor(...)``, lifted by export), keyed
    'function:input' (the key each such input's signature gets)."""
    found = {}
    for function, translator in functions.items():
        for spec in translator.inputs:
            if spec.kind == "constant":
                value = translator.made_constants.get(spec.key)
                if value is None:
                    value = translator.exported.constants[spec.key]
                spec.key = f"{function}:{spec.name}"
                found[spec.key] = value.detach().clone()
    return found


def _state(module):
    """Every parameter and buffer (non-persistent ones too), by state_dict key."""
    found = dict(module.named_parameters())
    found.update(module.named_buffers())
    return found


def _tied(module):
    """{second key: first key} of each parameter or buffer the module holds under several
    state_dict keys (``self.b.weight = self.a.weight``): one tensor, which the weights
    keep once, and whose gradient sums its uses, as in PyTorch."""
    first, tied = {}, {}
    for key, value in list(module.named_parameters(remove_duplicate=False)) + \
            list(module.named_buffers(remove_duplicate=False)):
        if id(value) in first:
            tied[key] = first[id(value)]
        else:
            first[id(value)] = key
    return tied


def _check_names(module):
    """torch.export writes state_dict keys into Python code: one with a line break would
    fail there, with a message about a string literal. Refused first, naming the key."""
    keys = [key for key, _ in module.named_modules(remove_duplicate=False)]
    keys += [key for key, _ in module.named_parameters(remove_duplicate=False)]
    keys += [key for key, _ in module.named_buffers(remove_duplicate=False)]
    for key in keys:
        if "\n" in key or "\r" in key:
            raise TorchImportError(
                f"the name {key!r} holds a line break, which torch.export cannot "
                f"capture: rename the submodule, parameter or buffer")


def _check_sizes(args):
    """An empty dimension in the example would make export specialise the program to it
    (a program for no data): refused with what to pass instead."""
    for k, value in enumerate(args):
        if isinstance(value, torch.Tensor) and value.numel() == 0:
            shape = list(value.shape)
            raise TorchImportError(
                f"example argument {k} has the shape {shape}, with an empty dimension: "
                f"tenet.from_torch traces the forward on the example, so give one of the "
                f"sizes the module is meant for (a batch of at least 2, and no dimension "
                f"of size 0); with dynamic_batch (the default) the program then takes any "
                f"batch size, 0 included")


def _signature(translator):
    return {
        "results": pytree.treespec_dumps(translator.exported.call_spec.out_spec),
        "inputs": [{"name": i.name, "kind": i.kind, "key": i.key, "shape": list(i.tensor.shape),
                    "p": i.extra} for i in translator.inputs],
        "outputs": [{"name": o.name, "kind": o.kind, "key": o.key} for o in translator.outputs],
    }


def _function_name(module):
    """The class name in snake case ('MnistCNN' -> 'mnist_cnn'); never a single letter
    (those are index names) nor a language name."""
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", type(module).__name__).lower()
    name = re.sub(r"[^a-z0-9_]", "_", name).strip("_")
    if len(name) < 2 or not name[0].isalpha() or not Namer().is_free(name):
        name = f"{name}_model" if name[:1].isalpha() else "model"
    return name


def _header(module, entries):
    kind = type(module)
    origin = comment_text(f"{kind.__module__}.{kind.__qualname__}")  # user text: escaped
    lines = [f"# {origin}, imported from PyTorch by tenet.from_torch",
             "# (torch.export, Core ATen). Parameters and buffers are inputs named after their",
             "# state_dict keys ('.' -> '_'); B is the batch size."]
    if entries["train"] != entries["eval"]:
        lines.append(f"# {entries['train']}: training mode; {entries['eval']}: evaluation mode.")
    return "\n".join(lines) + "\n\n"


def _in_float32(module, example_args):
    """A copy of ``module`` whose float16 and bfloat16 parameters and buffers are float32,
    and ``example_args`` with those dtypes converted."""
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"from_torch takes a torch.nn.Module, got {type(module).__name__}")
    module = copy.deepcopy(module)
    half = [getattr(torch, name) for name in HALF_TYPES]
    for value in list(module.parameters()) + list(module.buffers()):
        if value.dtype in half:
            value.data = value.data.float()
    if isinstance(example_args, torch.Tensor):
        example_args = (example_args,)
    if isinstance(example_args, (tuple, list)):
        example_args = tuple(a.float() if isinstance(a, torch.Tensor) and a.dtype in half else a
                             for a in example_args)
    return module, example_args


def _check_dtypes(module, args):
    """Parameters, buffers and arguments of a dtype Tenet has no type for are refused
    before anything is exported."""
    supported = ("which Tenet does not support (float32, float64, integers, bool; a float16 "
                 "or bfloat16 model imports with compute_dtype=torch.float32)")
    for key, value in list(module.named_parameters()) + list(module.named_buffers()):
        if tenet_type(value.dtype) is None:
            raise TorchImportError(f"{key} has dtype {_dtype_name(value)}, {supported}",
                                   module_path=key.rsplit(".", 1)[0] if "." in key else "")
    for k, value in enumerate(args):
        if isinstance(value, torch.Tensor) and tenet_type(value.dtype) is None:
            raise TorchImportError(f"argument {k} has dtype {_dtype_name(value)}, {supported}")


def _dtype_name(tensor):
    return str(tensor.dtype).replace("torch.", "")
