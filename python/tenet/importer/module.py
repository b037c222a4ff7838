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

import torch

from .. import sizes as symbolic


class TenetModule(torch.nn.Module):
    def __init__(self, program, original=None):
        super().__init__()
        self.program = program
        if original is not None:
            # the same dicts: parameters, buffers and children are the original's
            self._parameters = original._parameters
            self._buffers = original._buffers
            self._non_persistent_buffers_set = original._non_persistent_buffers_set
            self._modules = original._modules
            self.train(original.training)
        else:
            _adopt_weights(self, program.weights, program.manifest.get("parameters", []))

    def extra_repr(self):
        return f"tenet: {self.program.entry(True)} / {self.program.entry(False)}"

    def forward(self, *args):
        signature = self.program.signature(self.training)
        op = self.program.torch_op(self.training)
        state = dict(self.named_parameters())
        state.update(self.named_buffers())
        float_dtype = _float_dtype(state, args)
        bound = _bind_sizes(signature, args)
        updated = {spec["key"] for spec in signature["outputs"] if spec["kind"] == "buffer"}
        inputs = []
        for spec in signature["inputs"]:
            kind = spec["kind"]
            if kind in ("parameter", "buffer", "constant"):
                value = state[spec["key"]]
                # a buffer updated below: autograd saves the value the call read
                inputs.append(value.clone() if spec["key"] in updated else value)
            elif kind == "user":
                inputs.append(args[spec["key"]])
            elif kind == "dropout":
                shape = [symbolic.evaluate(d, bound) for d in spec["shape"]]
                keep = 1 - spec["p"]
                inputs.append(torch.empty(shape, dtype=float_dtype).bernoulli_(keep).div_(keep))
        results = op(*inputs)
        if not isinstance(results, tuple):
            results = (results,)
        user = []
        for spec, value in zip(signature["outputs"], results):
            if spec["kind"] == "buffer":
                with torch.no_grad():
                    state[spec["key"]].copy_(value)
            else:
                user.append(value)
        return user[0] if len(user) == 1 else tuple(user)


def _bind_sizes(signature, args):
    bound = {}
    for spec in signature["inputs"]:
        if spec["kind"] != "user":
            continue
        for text, size in zip(spec["shape"], args[spec["key"]].shape):
            name = symbolic.as_symbol(text)
            if name is not None:
                bound.setdefault(name, size)
    return bound


def _float_dtype(state, args):
    for value in list(state.values()) + list(args):
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            return value.dtype
    return torch.float32


def _adopt_weights(module, weights, parameter_keys):
    """Parameters (``parameter_keys``) and buffers at their dotted state_dict keys, in
    plain submodules, so that state_dict() has the original's keys."""
    for key, value in weights.items():
        *path, leaf = key.split(".")
        owner = module
        for part in path:
            if part not in owner._modules:
                owner.add_module(part, torch.nn.Module())
            owner = owner._modules[part]
        if key in parameter_keys:
            owner.register_parameter(leaf, torch.nn.Parameter(value))
        else:
            owner.register_buffer(leaf, value)
