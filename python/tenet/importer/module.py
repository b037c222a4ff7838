"""The module back: a torch.nn.Module whose forward and backward run the imported
program's compiled code, through its PyTorch operator (tenet.library) whose autograd
formula is Tenet's derived vector-Jacobian program.

It shares the original module's parameters, buffers and submodules (the same objects,
under the same state_dict keys), so optimisers, LR schedulers, state_dict() and
train()/eval() work on it as on the original. Training mode runs the training
function, evaluation mode the evaluation one; buffers the training function updates
(BatchNorm's running statistics and num_batches_tracked) are copied into the module's
buffers after each call, as PyTorch updates them. Dropout masks are drawn before each
call, in the order and with the random calls PyTorch's CPU dropout makes.
"""

import re

import torch
from torch.utils import _pytree as pytree

from .._tenet import BindError
from .. import sizes as symbolic


def source_of(source, entry, message):
    """What the comment above the statement a run-time error names says ("net.fc
    (Linear)  model.py:12: x = self.fc(x)": the op, its module and the Python line), or
    None: messages name the statement ("the statement defining 'gather'")."""
    found = re.search(r"statement defining '(\w+)'", message)
    lines = source.split("\n")
    start = next((k for k, line in enumerate(lines) if line.startswith(f"def {entry}(")), None)
    if not found or start is None:
        return None
    defines = re.compile(r"\s+%s\b" % re.escape(found.group(1)))
    comment = None
    for line in lines[start + 1:]:
        if line.startswith("def "):
            break
        if line.lstrip().startswith("#"):
            comment = line.lstrip()[1:].strip()
        elif defines.match(line):
            return comment
    return None


class TenetModule(torch.nn.Module):
    def __init__(self, program, original=None, target=None, specialise=True):
        super().__init__()
        self.program = program
        self._target = target  # None: by the tensors' device (cpu, or cuda)
        # (mode, target) -> the sizes of its first call, compiled in (Program.module)
        self._specialise = specialise
        self._first_sizes = {}
        # made now, so that forward only looks them up (also under torch.compile); the
        # GPU's on the first call with CUDA tensors
        self._ops = {(mode, target or "cpu"): program.torch_op(mode, target or "cpu")
                     for mode in (True, False)}
        self._signatures = {mode: program.signature(mode) for mode in (True, False)}
        declared = {mode: self._ops[(mode, target or "cpu")].function.inputs
                    for mode in (True, False)}
        self._size_places = {mode: _size_places(self._signatures[mode], declared[mode])
                             for mode in (True, False)}
        self._mask_shapes = {mode: _mask_shapes(self._signatures[mode], declared[mode],
                                                self._size_places[mode])
                             for mode in (True, False)}
        # the structure of the forward's results (a tensor, a tuple, a dict, ...)
        self._results = {mode: pytree.treespec_loads(self._signatures[mode]["results"])
                         for mode in (True, False)}
        if original is not None:
            # the same dicts: parameters, buffers and children are the original's
            self._parameters = original._parameters
            self._buffers = original._buffers
            self._non_persistent_buffers_set = original._non_persistent_buffers_set
            self._modules = original._modules
            self.train(original.training)
        else:
            _adopt_weights(self, program.weights, program.manifest)

    def extra_repr(self):
        return f"tenet: {self.program.entry(True)} / {self.program.entry(False)}"

    def _op(self, device, args):
        """The operator of the current mode for tensors on ``device``: the one specialised
        to the sizes of ``args`` when they are those of the mode's first call."""
        target = self._target or ("cuda" if device.type == "cuda" else "cpu")
        key = (self.training, target)
        if self._specialise and not torch.compiler.is_compiling():
            # (not while torch.compile traces: it may trace with symbolic sizes, and
            # operators are registered outside its graphs)
            sizes = {name: args[k].shape[d]
                     for name, (k, d) in self._size_places[self.training].items()}
            first = self._first_sizes.setdefault(key, sizes)
            if sizes and sizes == first:
                static = key + (tuple(sorted(sizes.items())),)
                if static not in self._ops:
                    self._ops[static] = self.program.torch_op(self.training, target, sizes)
                return self._ops[static]
        if key not in self._ops:
            self._ops[key] = self.program.torch_op(self.training, target)
        return self._ops[key]

    def forward(self, *args):
        signature = self._signatures[self.training]
        if self.program.manifest.get("compute_dtype") == "float32":  # a half model
            args = tuple(a.float() if isinstance(a, torch.Tensor) and a.dtype in _HALF else a
                         for a in args)
        _check_arguments(signature, args)
        # every key, tied ones too (b.weight, the same Parameter as a.weight)
        state = dict(self.named_parameters(remove_duplicate=False))
        state.update(self.named_buffers(remove_duplicate=False))
        float_dtype = _float_dtype(state, args)
        device = _device(state, args)
        op = self._op(device, args)
        masks = self._mask_shapes[self.training]
        updated = {spec["key"] for spec in signature["outputs"] if spec["kind"] == "buffer"}
        inputs = []
        for spec in signature["inputs"]:
            kind = spec["kind"]
            if kind == "constant":
                value = self.program.weights[spec["key"]].to(device)
                inputs.append(value.to(float_dtype) if value.is_floating_point() else value)
            elif kind in ("parameter", "buffer"):
                value = state[spec["key"]]
                # a buffer updated below: autograd saves the value the call read
                inputs.append(value.clone() if spec["key"] in updated else value)
            elif kind == "user":
                inputs.append(args[spec["key"]])
            elif kind in ("dropout", "bernoulli"):
                shape = [d if isinstance(d, int) else d(args) for d in masks[spec["name"]]]
                inputs.append(_draw(kind, spec["p"], shape, float_dtype, device))
        try:
            results = op(*inputs)
        except BindError as error:
            where = source_of(self.program.source, self.program.entry(self.training), str(error))
            if where is None:
                raise
            raise BindError(f"{where}: {error}") from None
        if not isinstance(results, tuple):
            results = (results,)
        user = []
        for spec, value in zip(signature["outputs"], results):
            if spec["kind"] == "buffer":
                with torch.no_grad():
                    state[spec["key"]].copy_(value)
            else:
                user.append(value)
        return pytree.tree_unflatten(user, self._results[self.training])


def _check_arguments(signature, args):
    """The forward's arguments: as many tensors as the imported forward took (export
    fixed everything else), else a TypeError naming what it expects."""
    users = sorted((spec for spec in signature["inputs"] if spec["kind"] == "user"),
                   key=lambda spec: spec["key"])
    expected = ", ".join(f"{spec['name']}: [{', '.join(spec['shape'])}]" for spec in users)
    if len(args) != len(users):
        raise TypeError(f"the imported module's forward takes {len(users)} tensor "
                        f"argument{'s' if len(users) != 1 else ''} ({expected}), as the "
                        f"example given to tenet.from_torch, but was given {len(args)}")
    for spec in users:
        value = args[spec["key"]]
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"the imported module's forward: argument {spec['key']} "
                            f"({spec['name']}) must be a tensor, not {type(value).__name__} "
                            f"(it takes {expected})")


def _draw(kind, p, shape, dtype, device):
    """A dropout mask (Bernoulli(1 - p) / (1 - p)) or a Bernoulli(p) draw, as PyTorch
    draws them (on ``device``, with its generator)."""
    if kind == "dropout":
        return torch.empty(shape, dtype=dtype, device=device).bernoulli_(1 - p).div_(1 - p)
    return torch.empty(shape, dtype=dtype, device=device).bernoulli_(p)


def _device(state, args):
    """Where the call runs: the device of the first tensor argument, else of the first
    parameter or buffer (CPU without any)."""
    for value in list(args) + list(state.values()):
        if isinstance(value, torch.Tensor):
            return value.device
    return torch.device("cpu")


def _size_places(signature, declared):
    """{size parameter: (argument, dimension)} for the sizes that some dimension of the
    forward's arguments is (a plain size: B, not H - 2). ``declared``: the operator's
    inputs (TensorDecls, in the signature's order), whose shapes the compiler gives as
    sizes.Size trees."""
    where = {}
    for spec, decl in zip(signature["inputs"], declared):
        if spec["kind"] == "user":
            for d, size in enumerate(decl.shape):
                name = symbolic.as_symbol(size)
                if name is not None:
                    where.setdefault(name, (spec["key"], d))
    return where


def _mask_shapes(signature, declared, where):
    """{dropout mask: its shape}, each dimension an int or a function of the forward's
    arguments (the size read off the argument that has it, ``where``: _size_places)."""
    shapes = {}
    for spec, decl in zip(signature["inputs"], declared):
        if spec["kind"] in ("dropout", "bernoulli"):
            shapes[spec["name"]] = [_dimension(size, where) for size in decl.shape]
    return shapes


def _dimension(size, where):
    if isinstance(size.tree, int):
        return size.tree
    if size.tree in where:
        k, d = where[size.tree]
        return lambda args: args[k].shape[d]

    def evaluate(args):
        return symbolic.evaluate(size, {n: args[k].shape[d] for n, (k, d) in where.items()})
    return evaluate


_HALF = (torch.float16, torch.bfloat16)


def _float_dtype(state, args):
    for value in list(state.values()) + list(args):
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            return value.dtype
    return torch.float32


def _adopt_weights(module, weights, manifest):
    """The manifest's parameters and buffers at their dotted state_dict keys, in plain
    submodules and in the original's order, so that state_dict() is the original's.
    Constants of the forward ('function:name') stay the program's."""
    parameter_keys = set(manifest["parameters"])
    non_persistent = set(manifest["non_persistent"])
    tied = manifest.get("tied", {})  # a second key of a parameter -> its first key
    made = {key: torch.nn.Parameter(weights[key]) if key in parameter_keys else weights[key]
            for key in manifest["state"] if key not in tied}
    for key in manifest["state"]:
        *path, leaf = key.split(".")
        owner = module
        for part in path:
            if part not in owner._modules:
                owner.add_module(part, torch.nn.Module())
            owner = owner._modules[part]
        # a tied key: the same Parameter (or buffer) under a second name, as PyTorch ties
        value = made[tied.get(key, key)]
        if isinstance(value, torch.nn.Parameter):
            owner.register_parameter(leaf, value)
        else:
            owner.register_buffer(leaf, value, persistent=key not in non_persistent)
