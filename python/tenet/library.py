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
  input), also with a CPU and a fake kernel. Autograd passes no gradient
  through an output the loss does not use (as PyTorch's own operators): when
  only some float outputs have gradients, it runs instead
- ``tenet::<name>_backward_partial(Tensor x, ..., Tensor? d_<output>, ...)``:
  the product of the outputs whose cotangent is not None alone (one derived
  program per such set, made on first use), so that an unused output whose
  derivative is infinite (``log`` at 0) does not make a gradient NaN
  (0 * inf). Registered only for functions with several float outputs.

A call with gradients to come (grad mode on, a float input requiring grad) runs
neither of these on the CPU target but ``tenet::<name>_saving``, the forward
half of the vector-Jacobian program that also returns what its backward half
reads, and autograd's backward then runs ``tenet::<name>_backward_saved``, which
takes those values instead of computing the forward a second time (saving.py).

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

import hashlib
import re
import threading

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


def _argument_names(names):
    """Names as a schema's arguments: identifiers, each once (AD names a cotangent
    ``d_y.1`` when an input is already named ``d_y``)."""
    out, taken = [], set()
    for name in names:
        base = re.sub(r"[^A-Za-z0-9_]", "_", name)
        unique, n = base, 1
        while unique in taken:
            n += 1
            unique = f"{base}_{n}"
        taken.add(unique)
        out.append(unique)
    return out


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
    differentiable), ``.partial_backward_op`` the backward of some outputs (None with
    fewer than two float outputs), ``.saving`` the saving forward and its backward
    (saving.py; None for GPU targets and without gradients), ``.qualname`` the
    dispatcher name ``tenet::<name>``.
    """

    def __init__(self, function, name, differentiable=None):
        """Registers the operators; use ``registered`` (one TorchOp per name)."""
        self._register(function, name)
        self.differentiable_names = differentiable
        self.differentiable = []
        if self.backward_op is not None:
            self._register_saving(differentiable)

    def __call__(self, *args, **kwargs):
        updated = [(i, o.updates) for i, o in enumerate(self._outputs) if o.updates is not None]
        # The operators are functional (autograd needs that): an output the function
        # updates is given the initial value and returns the final one, which is then
        # copied into the caller's tensor, as an in-place PyTorch operation is recorded
        # (copy_).
        values = arguments.order(self.name, self._inputs, args, kwargs)
        targets = {k: values[k] for _, k in updated}
        for k, target in targets.items():
            if not isinstance(target, torch.Tensor):
                raise TypeError(f"argument '{self._inputs[k].name}': output "
                                f"'{self._inputs[k].name}' is updated in place, so it must be "
                                f"a torch tensor (got {type(target).__name__})")
            if torch.is_grad_enabled():
                values[k] = target.clone()  # the backward may need the initial value
        results = self._apply(values)
        for i, k in updated:
            targets[k].copy_(results[i])
            results[i] = targets[k]
        return _one_or_tuple(results)

    def _apply(self, values):
        """The function's results: from the saving operator when a gradient may follow
        (its backward then starts from the saved values), else from the operator."""
        if self.saving is not None and torch.is_grad_enabled() and any(
                isinstance(v, torch.Tensor) and v.requires_grad for v in values):
            return self.saving.call(values)
        results = self.op(list(values)) if self._packed else self.op(*values)
        return list(results) if isinstance(results, (list, tuple)) else [results]

    def compile(self, float64=False):
        """JIT-compiles the forward and backward kernels for a dtype now (instead of on
        first use); returns self. Safe to call from several threads at once."""
        self.function.kernel(float64)
        if self.backward_op is not None:
            self._vjp.kernel(float64)
        if self.saving is not None:
            self.saving.compile(float64)
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
        self.backward_op = self.partial_backward_op = self.saving = None
        self._partial_vjps = {}  # float output positions -> Function.vjp(output=[...])
        self._partial_lock = threading.Lock()
        if self._float_inputs and self._float_outputs:
            self._vjp = function.backward
            # the vjp's arguments: the inputs, then one cotangent per float output
            names = _argument_names(self._vjp.input_names)
            cotangents = names[len(self._inputs):]
            self.backward_op = torch.library.custom_op(
                f"{self.qualname}_backward", self._backward, mutates_args=(),
                schema=_schema(names, len(self._float_inputs), self._packed))
            self.backward_op.register_fake(self._backward_fake)
            if len(self._float_outputs) > 1:
                self._register_partial_backward(cotangents)
            self.op.register_autograd(self._autograd_backward,
                                      setup_context=self._setup_context)

    def _register_partial_backward(self, cotangents):
        """``tenet::<name>_backward_partial``: the backward with optional cotangents, for
        when only some outputs have gradients. Registered with the others (not on first
        use), so that a compiled graph calling it runs in a process that never traced it
        (torch.compile's caches)."""
        if self._packed:
            schema = "(Tensor[] inputs, Tensor?[] cotangents) -> Tensor[]"
        else:
            schema = ("(" + ", ".join([f"Tensor {p}" for p in self.function.input_names] +
                                      [f"Tensor? {c}" for c in cotangents]) +
                      ") -> " + _returns(len(self._float_inputs)))
        self.partial_backward_op = torch.library.custom_op(
            f"{self.qualname}_backward_partial", self._partial_backward, mutates_args=(),
            schema=schema)
        self.partial_backward_op.register_fake(self._partial_backward_fake)

    def _register_saving(self, differentiable):
        """The saving forward and its backward (saving.py), for the float outputs that
        ``differentiable`` names (None: all; the others, a model's updated buffers, are
        marked non-differentiable). CPU target only."""
        self.differentiable = [k for k in self._float_outputs
                               if differentiable is None or
                               self._outputs[k].name in differentiable]
        if self.differentiable and self.function.target == "cpp":
            from .saving import SavingOps
            self.saving = SavingOps(self, self.differentiable)

    # -- forward ---------------------------------------------------------------------------

    def _results(self, tensors):
        """What an operator returns: a list when packed, else one tensor or a tuple."""
        return list(tensors) if self._packed else _one_or_tuple(tensors)

    def _forward(self, *args):
        args = args[0] if self._packed else args
        values, float64 = arguments.check(self.name, self._inputs, args, {},
                                          devices=self.function.devices)
        return self._results(self.function.run_tensors(values, float64))

    def _forward_fake(self, *args):
        args = args[0] if self._packed else args
        return self._results(self._fake_results(self._outputs, args))

    def _fake_results(self, outputs, args):
        """Empty tensors of the shapes and dtypes the CPU kernel would return."""
        values, float64 = arguments.check(self.name, self._inputs, args, {}, allow_meta=True,
                                          devices=self.function.devices)
        bound = symbolic.bind(self._inputs, [v.shape for v in values], self.function.sizes)
        device = values[0].device if values else torch.device("cpu")
        results = []
        for out in outputs:
            shape = [symbolic.evaluate(d, bound, torch.sym_min, torch.sym_max)
                     for d in out.shape]
            for dim, size in zip(out.shape, shape):
                torch._check(size >= 0, lambda dim=dim, size=size: (
                    f"{self.name}: output '{out.name}' would have dimension {dim} = {size} < 0 "
                    f"for these input shapes"))
            dtype = "float64" if float64 and out.type in arguments.FLOAT_TYPES else out.type
            results.append(torch.empty(shape, dtype=_torch_dtype(dtype), device=device))
        return results

    # -- backward --------------------------------------------------------------------------

    def _backward(self, *args, vjp=None, name=None):
        vjp, name = vjp or self._vjp, name or f"{self.name}_backward"
        args = args[0] if self._packed else args
        return self._results(self._gradients(vjp, name, args))

    def _backward_fake(self, *args, vjp=None, name=None):
        vjp, name = vjp or self._vjp, name or f"{self.name}_backward"
        args = args[0] if self._packed else args
        return self._results(self._gradients_fake(vjp, name, args))

    def _gradients(self, vjp, name, args):
        """Each float input's gradient from a backward program run on ``args``."""
        values, float64 = arguments.check(name, vjp.inputs, args, {}, devices=vjp.devices)
        return self.picked_gradients(vjp, vjp.run_tensors(values, float64))

    def picked_gradients(self, vjp, outputs):
        """Each float input's gradient among the results of a backward program ``vjp``,
        as AD marked it (not by position or name)."""
        gradient = {o.gradient_of: k for k, o in enumerate(vjp.outputs)
                    if o.gradient_of is not None}
        return [outputs[gradient[i]] for i in self._float_inputs]

    def _gradients_fake(self, vjp, name, args, decls=None):
        """What ``_gradients`` returns, as empty tensors; ``decls``: the arguments'
        declarations (default: the program's inputs)."""
        values, _ = arguments.check(name, decls or vjp.inputs, args, {}, allow_meta=True,
                                    devices=vjp.devices)
        # the CPU kernel returns dense tensors with the inputs' shapes and dtypes
        return [torch.empty(values[i].shape, dtype=values[i].dtype, device=values[i].device)
                for i in self._float_inputs]

    def partial_vjp(self, outputs):
        """The vector-Jacobian program of some float outputs only (positions in the
        function's outputs): ``Function.vjp(output=[...])``, made once per set."""
        outputs = tuple(sorted(outputs))
        if outputs == tuple(self._float_outputs):
            return self._vjp
        with self._partial_lock:
            vjp = self._partial_vjps.get(outputs)
            if vjp is None:
                names = [self._outputs[k].name for k in outputs]
                vjp = self._partial_vjps[outputs] = self.function.vjp(output=names)
        return vjp

    def _partial_arguments(self, args):
        """A partial backward call's arguments as (arguments of the vjp of the outputs
        whose cotangents are not None, that vjp)."""
        if self._packed:
            inputs, cotangents = args
        else:
            inputs, cotangents = args[:len(self._inputs)], args[len(self._inputs):]
        given = [k for k, c in zip(self._float_outputs, cotangents) if c is not None]
        if not given:
            raise ValueError(f"{self.name}_backward_partial: every cotangent is None, so "
                             f"there is nothing to differentiate")
        values = list(inputs) + [c for c in cotangents if c is not None]
        return ((values,) if self._packed else values), self.partial_vjp(given)

    def _partial_backward(self, *args):
        values, vjp = self._partial_arguments(args)
        return self._backward(*values, vjp=vjp, name=f"{self.name}_backward_partial")

    def _partial_backward_fake(self, *args):
        values, vjp = self._partial_arguments(args)
        return self._backward_fake(*values, vjp=vjp, name=f"{self.name}_backward_partial")

    def _setup_context(self, ctx, inputs, output):
        # An output the loss does not use arrives with gradient None rather than zeros,
        # and is left out of the backward: 0 * (d out / d x) is NaN where that
        # derivative is infinite, and PyTorch passes no gradient through it.
        ctx.set_materialize_grads(False)
        if self._packed:
            inputs = inputs[0]
            ctx.needs = [t.requires_grad for t in inputs]
        ctx.save_for_backward(*inputs)

    def _autograd_backward(self, ctx, *grads):
        inputs = ctx.saved_tensors
        needs = ctx.needs if self._packed else ctx.needs_input_grad
        result = [None] * len(inputs)
        if self._packed:
            grads = grads[0] if grads[0] is not None else [None] * len(self._outputs)
        cotangents = [grads[k] for k in self._float_outputs]
        given = [c for c in cotangents if c is not None]
        if not given or not any(needs[i] for i in self._float_inputs):
            return result if self._packed else tuple(result)
        if len(given) == len(cotangents):
            args = [list(inputs) + cotangents] if self._packed else [*inputs, *cotangents]
            gradients = self.backward_op(*args)
        else:  # the product of the outputs with gradients alone
            args = [list(inputs), cotangents] if self._packed else [*inputs, *cotangents]
            gradients = self.partial_backward_op(*args)
        if not self._packed and len(self._float_inputs) == 1:
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


def registered(function, name=None, differentiable=None):
    """The operator for a Function: registered on first request, the same object after
    (the dispatcher takes each name once). ``name`` defaults to
    ``<function name>_<hash of its source, entry and sizes>`` (and of ``differentiable``,
    the float outputs that can get gradients, when given)."""
    _check_torch_dtypes(function)
    if name is not None and not (isinstance(name, str) and _OPERATOR_NAME.fullmatch(name)):
        raise ValueError(f"name: an operator's name must be an identifier (letters, digits, "
                         f"'_'; not starting with a digit), got {name!r:.60}")
    if differentiable is not None:
        differentiable = tuple(sorted(set(differentiable)))
    if name is None:
        name = f"{function.name}_{function.key}"
        if differentiable is not None:
            text = "\0".join(differentiable).encode()
            name += "_" + hashlib.sha256(text).hexdigest()[:6]
    existing = _REGISTERED.get(name)
    if existing is None:
        existing = _REGISTERED[name] = TorchOp(function, name, differentiable)
    elif existing.function.key != function.key or \
            existing.differentiable_names != differentiable:
        raise ValueError(f"a different Tenet operator is already registered as "
                         f"{_NAMESPACE}::{name}")
    return existing


def torch_op(source, entry=None, *, name=None, **compile_options):
    """Compiles ``entry`` of ``source`` (see tenet.compile) and registers it as the
    PyTorch operator ``torch.ops.tenet.<name>`` with an autograd formula from Tenet's
    derived backward. ``name`` defaults to ``<entry>_<hash of the source>``."""
    from .function import compile as compile_function
    return compile_function(source, entry, **compile_options).torch_op(name)
