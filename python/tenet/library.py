"""Tenet functions as PyTorch operators with autograd (torch.library).

``tenet.torch_op(source, entry)`` registers two custom operators with the
PyTorch dispatcher, in the ``tenet`` namespace:

- ``tenet::<name>(Tensor x, ...) -> (Tensor, ...)``: the function. Its CPU
  kernel runs the JIT-compiled code; its fake (meta) kernel infers output
  shapes from the IR's symbolic sizes (``sizes.py``), so the operator traces
  under ``torch.compile(fullgraph=True)`` without a graph break; its autograd
  formula saves the inputs and calls
- ``tenet::<name>_backward(Tensor x, ..., Tensor d_<output>, ...)``: the
  vector-Jacobian program Tenet derives (every float output, every float
  input), also with a CPU and a fake kernel.

``<name>`` is the entry's name plus a hash of the source, so the same program
always gets the same operator (and ``torch.ops.tenet.<name>`` reaches it,
from Python or from C++ through ``c10::Dispatcher``). float32 and float64
CPU tensors are accepted (the language's ``float`` follows the dtype);
non-contiguous inputs are made contiguous; a wrong dtype, device, rank or
shape is an error naming the argument, raised by the fake kernel at trace
time and by the CPU kernel when run eagerly. Integer and bool inputs get no
gradient; float16 ones get a float16 gradient. uint16/32/64 inputs or
outputs are refused (PyTorch has them only as limited dtypes).
The backward operator has no autograd formula of its own: a double backward
is an error.
"""

import re

try:
    import torch
except ModuleNotFoundError as missing:
    raise ImportError("tenet's PyTorch operators need PyTorch: pip install 'torch>=2.4'") \
        from missing

from . import arguments
from . import sizes as symbolic

_NAMESPACE = "tenet"
_OPERATOR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REGISTERED = {}  # operator name -> TorchOp


def _torch_dtype(type_name):
    return getattr(torch, type_name)


def _returns(count):
    return "Tensor" if count == 1 else "(" + ", ".join(["Tensor"] * count) + ")"


def _schema(params, result_count, packed=False):
    if packed:
        return "(Tensor[] inputs) -> Tensor[]"
    return "(" + ", ".join(f"Tensor {p}" for p in params) + ") -> " + _returns(result_count)


# PyTorch's dispatcher takes at most 64 arguments and 64 results per operator; a
# function with more (an imported ResNet-18's training step has over 100 parameters
# and buffers) becomes operators over one list of tensors each way.
_MOST_ARGUMENTS = 64


def _one_or_tuple(items):
    items = tuple(items)
    return items[0] if len(items) == 1 else items


class TorchOp:
    """A Tenet function registered as ``torch.ops.tenet.<name>`` with autograd.

    Call it like the function (tensors by position or name); ``.op`` is the forward
    operator, ``.backward_op`` the backward one (None when nothing is
    differentiable), ``.qualname`` the dispatcher name ``tenet::<name>``.
    """

    def __init__(self, function, name):
        """Registers the operators; use ``registered`` (one TorchOp per name)."""
        self._register(function, name)

    def __call__(self, *args, **kwargs):
        updated = [(i, o.updates) for i, o in enumerate(self._outputs) if o.updates is not None]
        if self._packed:
            values = arguments.order(self.name, self._inputs, args, kwargs)
            results = self.op(list(values))
            for i, k in updated:
                values[k].copy_(results[i])
                results[i] = values[k]
            return _one_or_tuple(results)
        if not updated:
            return self.op(*args, **kwargs)
        # The operator is functional (autograd needs that): it takes the initial value of
        # an output it updates and returns the final one, which is then copied into the
        # caller's tensor, as an in-place PyTorch operation is recorded (copy_).
        values = arguments.order(self.name, self._inputs, args, kwargs)
        targets = {k: values[k] for _, k in updated}
        for k, target in targets.items():
            if not isinstance(target, torch.Tensor):
                raise TypeError(f"argument '{self._inputs[k].name}': output "
                                f"'{self._inputs[k].name}' is updated in place, so it must be "
                                f"a torch tensor (got {type(target).__name__})")
            if torch.is_grad_enabled():
                values[k] = target.clone()  # the backward may need the initial value
        results = self.op(*values)
        results = list(results) if isinstance(results, tuple) else [results]
        for i, k in updated:
            targets[k].copy_(results[i])
            results[i] = targets[k]
        return _one_or_tuple(results)

    def compile(self, float64=False):
        """JIT-compiles the forward and backward kernels for a dtype now (instead of on
        first use); returns self. Safe to call from several threads at once."""
        self.function.kernel(float64)
        if self.backward_op is not None:
            self._vjp.kernel(float64)
        return self

    def __repr__(self):
        return f"<tenet.TorchOp {self.qualname}: {self.function!r}>"

    # -- registration ----------------------------------------------------------------------

    def _register(self, function, name):
        self.function = function
        self.name = name
        self.qualname = f"{_NAMESPACE}::{name}"
        self._inputs = function.inputs
        self._outputs = function.outputs
        self._float_inputs = [i for i, d in enumerate(self._inputs)
                              if d.type in arguments.FLOAT_TYPES]
        self._float_outputs = [k for k, o in enumerate(self._outputs)
                               if o.type in arguments.FLOAT_TYPES]
        self._packed = max(len(self._inputs) + len(self._float_outputs),
                           len(self._outputs)) > _MOST_ARGUMENTS
        self.op = torch.library.custom_op(
            self.qualname, self._forward, mutates_args=(),
            schema=_schema(function.input_names, len(self._outputs), self._packed))
        self.op.register_fake(self._forward_fake)
        self.backward_op = None
        if self._float_inputs and self._float_outputs:
            self._vjp = function.backward
            cotangents = [f"d_{self._outputs[k].name}" for k in self._float_outputs]
            self.backward_op = torch.library.custom_op(
                f"{self.qualname}_backward", self._backward, mutates_args=(),
                schema=_schema(function.input_names + cotangents, len(self._float_inputs),
                               self._packed))
            self.backward_op.register_fake(self._backward_fake)
            self.op.register_autograd(self._autograd_backward,
                                      setup_context=self._setup_context)

    # -- forward ---------------------------------------------------------------------------

    def _results(self, tensors):
        """What an operator returns: a list when packed, else one tensor or a tuple."""
        return list(tensors) if self._packed else _one_or_tuple(tensors)

    def _forward(self, *args):
        args = args[0] if self._packed else args
        values, float64 = arguments.check(self.name, self._inputs, args, {})
        outputs = self.function.run(values, float64)
        return self._results(torch.from_numpy(o) for o in outputs)

    def _forward_fake(self, *args):
        args = args[0] if self._packed else args
        values, float64 = arguments.check(self.name, self._inputs, args, {}, allow_meta=True)
        bound = symbolic.bind(self._inputs, [v.shape for v in values], self.function.sizes)
        device = values[0].device if values else torch.device("cpu")
        results = []
        for out in self._outputs:
            shape = [symbolic.evaluate(d, bound, torch.sym_min, torch.sym_max)
                     for d in out.shape]
            for dim, size in zip(out.shape, shape):
                torch._check(size >= 0, lambda dim=dim, size=size: (
                    f"{self.name}: output '{out.name}' would have dimension {dim} = {size} < 0 "
                    f"for these input shapes"))
            dtype = "float64" if float64 and out.type in arguments.FLOAT_TYPES else out.type
            results.append(torch.empty(shape, dtype=_torch_dtype(dtype), device=device))
        return self._results(results)

    # -- backward --------------------------------------------------------------------------

    def _backward(self, *args):
        args = args[0] if self._packed else args
        values, float64 = arguments.check(f"{self.name}_backward", self._vjp.inputs, args, {})
        outputs = self._vjp.run(values, float64)
        return self._results(torch.from_numpy(g) for g in outputs[len(self._outputs):])

    def _backward_fake(self, *args):
        args = args[0] if self._packed else args
        values, _ = arguments.check(f"{self.name}_backward", self._vjp.inputs, args, {},
                                    allow_meta=True)
        # the CPU kernel returns dense tensors with the inputs' shapes and dtypes
        return self._results(torch.empty(values[i].shape, dtype=values[i].dtype,
                                         device=values[i].device) for i in self._float_inputs)

    def _setup_context(self, ctx, inputs, output):
        if self._packed:
            inputs = inputs[0]
            ctx.needs = [t.requires_grad for t in inputs]
            outputs = output
            # results nothing depends on get no gradient: zeros of their shape instead
            ctx.output_meta = [(o.shape, o.dtype) for o in outputs]
        ctx.save_for_backward(*inputs)

    def _autograd_backward(self, ctx, *grads):
        inputs = ctx.saved_tensors
        needs = ctx.needs if self._packed else ctx.needs_input_grad
        result = [None] * len(inputs)
        if not any(needs[i] for i in self._float_inputs):
            return result if self._packed else tuple(result)
        if self._packed:
            grads = [g if g is not None else torch.zeros(shape, dtype=dtype)
                     for g, (shape, dtype) in zip(grads[0], ctx.output_meta)]
        cotangents = [grads[k] for k in self._float_outputs]
        if self._packed:
            gradients = self.backward_op(list(inputs) + cotangents)
        else:
            gradients = self.backward_op(*inputs, *cotangents)
            if len(self._float_inputs) == 1:
                gradients = (gradients,)
        for i, g in zip(self._float_inputs, gradients):
            result[i] = g if needs[i] else None
        return result if self._packed else tuple(result)


# PyTorch has these only as "limited" dtypes (few operators, no autograd): an
# operator taking or returning them would fail somewhere inside PyTorch.
_LIMITED_IN_TORCH = ("uint16", "uint32", "uint64")


def _check_torch_dtypes(function):
    for kind, decls in (("input", function.inputs), ("output", function.outputs)):
        for decl in decls:
            if decl.type in _LIMITED_IN_TORCH:
                raise TypeError(
                    f"cannot make a PyTorch operator of '{function.name}': {kind} "
                    f"'{decl.name}' is {decl.type}, which PyTorch supports only in part; "
                    f"use int32/int64 (or uint8) for it, or call the function itself "
                    f"with numpy arrays")


def registered(function, name=None):
    """The operator for a Function: registered on first request, the same object after
    (the dispatcher takes each name once). ``name`` defaults to
    ``<function name>_<hash of its source, entry and sizes>``."""
    _check_torch_dtypes(function)
    if name is not None and not (isinstance(name, str) and _OPERATOR_NAME.fullmatch(name)):
        raise ValueError(f"name: an operator's name must be an identifier (letters, digits, "
                         f"'_'; not starting with a digit), got {name!r:.60}")
    name = name or f"{function.name}_{function.key}"
    existing = _REGISTERED.get(name)
    if existing is None:
        existing = _REGISTERED[name] = TorchOp(function, name)
    elif existing.function.key != function.key:
        raise ValueError(f"a different Tenet operator is already registered as "
                         f"{_NAMESPACE}::{name}")
    return existing


def torch_op(source, entry=None, *, name=None, **compile_options):
    """Compiles ``entry`` of ``source`` (see tenet.compile) and registers it as the
    PyTorch operator ``torch.ops.tenet.<name>`` with an autograd formula from Tenet's
    derived backward. ``name`` defaults to ``<entry>_<hash of the source>``."""
    from .function import compile as compile_function
    return compile_function(source, entry, **compile_options).torch_op(name)
