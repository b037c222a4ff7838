"""The operators a Tenet PyTorch operator runs when a gradient is to come (library.py):
the forward half of its vector-Jacobian program, which also returns what the backward
half reads, and that backward half, which takes them instead of computing the forward a
second time (ad/split.h; docs/python.md, "Saved values").

- ``tenet::<name>_saving(Tensor x, ...) -> (Tensor, ..., Tensor saved)``: the outputs,
  then one uint8 tensor holding every saved value that is not an output (packed by the
  kernel at 64-byte aligned offsets: one tensor through autograd instead of hundreds);
- ``tenet::<name>_backward_saved(Tensor x, ..., Tensor <output>, ..., Tensor saved,
  Tensor d_<output>, ...)``: the inputs, the outputs the backward reads, the packed
  buffer and the cotangents; returns each float input's gradient.

Its autograd formula saves the inputs, those outputs and the buffer (marked
non-differentiable with the outputs that cannot get gradients) and, when some outputs
that can get gradients get none, falls back to the operator's ``_backward_partial``.
CPU target only: GPU targets keep the recomputing backward (library.py).

The names carry no format version: torch.compile's on-disk caches key compiled graphs
by operator name, so a change to what these operators return must rename them (a cache
made before this packing, when each saved value was a result of its own, failed with
"expected dtype torch.float32 but got torch.uint8" until /tmp/torchinductor_* was
cleared).
"""

import torch

from . import arguments
from .library import _MOST_ARGUMENTS, _argument_names, _one_or_tuple, _schema

_ALIGN = 64  # the packed buffer's alignment of each value, as python/src/kernel.cpp's


class SavingOps:
    """The saving forward and its backward for a TorchOp ``owner`` (see above)."""

    def __init__(self, owner, differentiable):
        """``differentiable``: positions of the float outputs that can get gradients."""
        self.owner = owner
        self.differentiable = differentiable
        names = [owner._outputs[k].name for k in differentiable]
        self.forward = owner.function.vjp(output=names, half="forward")
        self.backward = owner.function.vjp(output=names, half="backward")
        n_in, n_out = len(owner._inputs), len(owner._outputs)
        produced = [o.name for o in self.forward.outputs]
        taken = self.backward.input_names[n_in:len(self.backward.inputs) - len(names)]
        positions = [produced.index(n) for n in taken]
        self.kept = [k for k in positions if k < n_out]  # outputs the backward reads
        # the backward's inputs read from the packed buffer, in its order
        self.slots = [n_in + j for j, k in enumerate(positions) if k >= n_out]
        if [k for k in positions if k >= n_out] != list(range(n_out, len(produced))):
            raise AssertionError(f"{owner.name}: the saved values are not in the backward's "
                                 f"order (this is a bug in Tenet)")
        self.others = [d for i, d in enumerate(self.backward.inputs) if i not in self.slots]
        self.forward_packed = max(n_in, n_out + 1) > _MOST_ARGUMENTS
        self.op = torch.library.custom_op(
            f"{owner.qualname}_saving", self._forward, mutates_args=(),
            schema=_schema(owner.function.input_names, n_out + 1, self.forward_packed))
        self.op.register_fake(self._forward_fake)
        others = [d.name for d in self.others]
        backward_names = _argument_names(others[:n_in + len(self.kept)] + ["saved"] +
                                         others[n_in + len(self.kept):])
        self.backward_packed = max(len(backward_names),
                                   len(owner._float_inputs)) > _MOST_ARGUMENTS
        self.backward_op = torch.library.custom_op(
            f"{owner.qualname}_backward_saved", self._backward, mutates_args=(),
            schema=_schema(backward_names, len(owner._float_inputs), self.backward_packed))
        self.backward_op.register_fake(self._backward_fake)
        self.op.register_autograd(self._autograd_backward, setup_context=self._setup_context)

    def compile(self, float64):
        self.forward.kernel(float64)
        self.backward.kernel(float64)

    def call(self, values):
        """The outputs (a list), computed by the saving operator."""
        results = self.op(list(values)) if self.forward_packed else self.op(*values)
        return list(results)[:len(self.owner._outputs)]

    # -- the kernels -------------------------------------------------------------------------

    def _forward(self, *args):
        args = args[0] if self.forward_packed else args
        values, float64 = arguments.check(self.owner.name, self.owner._inputs, args, {})
        results = self.forward.run_packing(values, float64, len(self.owner._outputs))
        return list(results) if self.forward_packed else _one_or_tuple(results)

    def _forward_fake(self, *args):
        args = args[0] if self.forward_packed else args
        n_out = len(self.owner._outputs)
        results = self.owner._fake_results(self.forward.outputs, args)
        size = sum((t.numel() * t.element_size() + _ALIGN - 1) // _ALIGN * _ALIGN
                   for t in results[n_out:])
        device = results[0].device if results else torch.device("cpu")
        buffer = torch.empty(size, dtype=torch.uint8, device=device)
        out = results[:n_out] + [buffer]
        return list(out) if self.forward_packed else _one_or_tuple(out)

    def _split(self, args):
        """The backward's arguments as (the others, in the program's order; the buffer)."""
        args = list(args[0] if self.backward_packed else args)
        at = len(self.owner._inputs) + len(self.kept)
        buffer = args[at]
        if not isinstance(buffer, torch.Tensor) or buffer.dtype != torch.uint8:
            raise TypeError(f"{self.owner.name}_backward_saved: argument 'saved' must be the "
                            f"uint8 tensor the saving forward returned")
        return args[:at] + args[at + 1:], buffer

    def _backward(self, *args):
        others, buffer = self._split(args)
        name = f"{self.owner.name}_backward_saved"
        values, float64 = arguments.check(name, self.others, others, {})
        outputs = self.backward.run_unpacking(values, buffer, self.slots, float64)
        results = self.owner.picked_gradients(self.backward, outputs)
        return list(results) if self.backward_packed else _one_or_tuple(results)

    def _backward_fake(self, *args):
        others, _ = self._split(args)
        results = self.owner._gradients_fake(self.backward, f"{self.owner.name}_backward_saved",
                                             others, decls=self.others)
        return list(results) if self.backward_packed else _one_or_tuple(results)

    # -- autograd ----------------------------------------------------------------------------

    def _setup_context(self, ctx, inputs, output):
        ctx.set_materialize_grads(False)  # as the operator's (library.py)
        if self.forward_packed:
            inputs = inputs[0]
        ctx.needs = [isinstance(t, torch.Tensor) and t.requires_grad for t in inputs]
        output = list(output)
        differentiable = set(self.differentiable)
        ctx.mark_non_differentiable(*[o for k, o in enumerate(output)
                                      if k not in differentiable])
        ctx.save_for_backward(*inputs, *[output[k] for k in self.kept], output[-1])

    def _autograd_backward(self, ctx, *grads):
        owner = self.owner
        saved = ctx.saved_tensors
        n_in = len(owner._inputs)
        inputs, kept, buffer = list(saved[:n_in]), list(saved[n_in:-1]), saved[-1]
        result = [None] * n_in
        if self.forward_packed:
            grads = grads[0] if grads[0] is not None else [None] * (len(owner._outputs) + 1)
        cotangents = [grads[k] for k in self.differentiable]
        done = result if self.forward_packed else tuple(result)
        if all(c is None for c in cotangents) or not any(ctx.needs[i]
                                                         for i in owner._float_inputs):
            return done
        if all(c is not None for c in cotangents):
            args = inputs + kept + [buffer] + cotangents
            gradients = (self.backward_op(args) if self.backward_packed
                         else self.backward_op(*args))
        else:  # the product of the outputs with gradients alone, from the inputs
            given = dict(zip(self.differentiable, cotangents))
            every = [given.get(k) for k in owner._float_outputs]
            args = [inputs, every] if owner._packed else [*inputs, *every]
            gradients = owner.partial_backward_op(*args)
        if not isinstance(gradients, (list, tuple)):
            gradients = (gradients,)
        for i, g in zip(owner._float_inputs, gradients):
            result[i] = g if ctx.needs[i] else None
        return result if self.forward_packed else tuple(result)
