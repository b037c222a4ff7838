"""PyTorch's default initialiser of each parameter, written as a trainer ``@param``
initialiser (docs/training.md, "Runtime: parameters and initialisers"), for the
standalone project ``Program.emit`` writes: its ``create`` starts from the values a
freshly constructed PyTorch module would have (in distribution, not the same numbers).

The rule follows the class of the module that owns the parameter (the first class of
its MRO that the table knows, so a subclass of ``nn.Linear`` is a Linear); a parameter
of a module the table does not know is initialised by its shape as a Linear or Conv
weight or bias would be, and reported, so that the caller can choose (``initialisers=``).
"""

import math

# torch.nn.Linear and the convolutions: kaiming_uniform_(w, a=sqrt(5)), i.e. gain
# sqrt(2 / (1 + 5)) = 1/sqrt(3) and bound 1/sqrt(fan_in); the bias U(-b, b) with the
# weight's b. fan_in = prod(shape[1:]) for all of them (a transposed convolution's
# weight is [in, out / groups, k...], and PyTorch computes its fan_in the same way).
_LINEAR_LIKE = {"Linear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
                "ConvTranspose2d", "ConvTranspose3d", "NonDynamicallyQuantizableLinear"}
_NORMS = {"LayerNorm", "GroupNorm", "RMSNorm", "InstanceNorm1d", "InstanceNorm2d",
          "InstanceNorm3d", "LocalResponseNorm"}
_EMBEDDINGS = {"Embedding", "EmbeddingBag"}
_RECURRENT = {"RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"}
_KNOWN = _LINEAR_LIKE | _NORMS | _EMBEDDINGS | _RECURRENT | {"PReLU", "Bilinear",
                                                             "MultiheadAttention"}
_GAIN = 1 / math.sqrt(3)


def module_classes(module):
    """{module path: its class name, or the first class of its MRO the table knows} for
    every submodule that holds parameters directly (the manifest keeps it, so that a
    loaded Program knows the classes too)."""
    found = {}
    for path, sub in module.named_modules():
        if not any(True for _ in sub.parameters(recurse=False)):
            continue
        names = [c.__name__ for c in type(sub).__mro__]
        found[path] = next((n for n in names if n in _KNOWN), names[0])
    return found


def _number(value):
    return f"{value:.9g}"


def _fan_in(shape):
    return math.prod(shape[1:])


def _linear_weight(shape):
    return f"kaiming_uniform(fan_in={_fan_in(shape)}, gain={_number(_GAIN)})"


def _uniform(bound):
    return f"uniform({_number(-bound)}, {_number(bound)})"


def default_initialisers(parameters, classes):
    """``parameters``: [(state_dict key, shape)]; ``classes``: module_classes(). Returns
    ({key: initialiser text}, [keys initialised by shape alone, with no known rule])."""
    shapes = dict(parameters)
    found, guessed = {}, []
    for key, shape in parameters:
        path, _, leaf = key.rpartition(".")
        kind = classes.get(path)
        rule = _by_class(kind, leaf, shape, path, shapes, classes)
        if rule is None:
            rule = _by_shape(leaf, shape, path, shapes)
            guessed.append(key)
        found[key] = rule
    return found, guessed


def _sibling(path, leaf):
    return f"{path}.{leaf}" if path else leaf


def _by_class(kind, leaf, shape, path, shapes, classes):
    if kind in _LINEAR_LIKE:
        if leaf == "weight" and len(shape) >= 2:
            return _linear_weight(shape)
        weight = shapes.get(_sibling(path, "weight"))
        if leaf == "bias" and weight is not None and len(weight) >= 2:
            parent = classes.get(path.rpartition(".")[0]) if path else None
            if parent == "MultiheadAttention" and path.endswith("out_proj"):
                return "zeros"  # MultiheadAttention._reset_parameters
            return _uniform(1 / math.sqrt(_fan_in(weight)))
        return None
    if kind in _NORMS:
        return {"weight": "ones", "bias": "zeros"}.get(leaf)
    if kind in _EMBEDDINGS:
        return "normal(0, 1)" if leaf == "weight" else None
    if kind in _RECURRENT:
        hidden = next((s[1] for k, s in shapes.items()
                       if k.startswith(_sibling(path, "weight_hh")) and len(s) == 2), None)
        return _uniform(1 / math.sqrt(hidden)) if hidden else None
    if kind == "PReLU":
        return "constant(0.25)" if leaf == "weight" else None
    if kind == "Bilinear":  # U(-1/sqrt(in1), 1/sqrt(in1)) for weight [out, in1, in2] and bias
        weight = shapes.get(_sibling(path, "weight"))
        return _uniform(1 / math.sqrt(weight[1])) if weight and len(weight) == 3 else None
    if kind == "MultiheadAttention":
        if leaf == "in_proj_weight" and len(shape) == 2:  # xavier_uniform_ on [3E, E]
            return f"xavier_uniform(fan_in={shape[1]}, fan_out={shape[0]})"
        if leaf == "in_proj_bias":
            return "zeros"
        if leaf in ("bias_k", "bias_v") and len(shape) == 3:  # xavier_normal_ on [1, 1, E]
            return f"xavier_normal(fan_in={shape[1] * shape[2]}, fan_out={shape[0] * shape[2]})"
        if leaf in ("q_proj_weight", "k_proj_weight", "v_proj_weight") and len(shape) == 2:
            return f"xavier_uniform(fan_in={shape[1]}, fan_out={shape[0]})"
    return None


def _by_shape(leaf, shape, path, shapes):
    """A parameter no rule covers: a weight of rank 2 or more as nn.Linear's, a bias next
    to such a weight as its bias, anything else zeros."""
    if len(shape) >= 2:
        return _linear_weight(shape)
    weight = shapes.get(_sibling(path, "weight"))
    if "bias" in leaf and weight is not None and len(weight) >= 2:
        return _uniform(1 / math.sqrt(_fan_in(weight)))
    return "zeros"
