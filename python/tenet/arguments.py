"""Checking a call's arguments against a function's declared inputs.

Works on numpy arrays, torch tensors (real or fake: only ``dtype``,
``shape`` and ``device`` are read) and Python numbers for scalar inputs.
Every error names the argument and says what was expected and what came:

- wrong number or names of arguments, an unsupported object: TypeError;
- wrong dtype or device: TypeError;
- wrong rank: ValueError (shapes that disagree with the declared sizes or
  with each other are found by ``sizes.bind`` in a fake kernel, or by the
  compiler's binder, ``tenet.BindError``, when a kernel runs).

The language's ``float`` follows the caller: a function declared ``float``
(float32) runs as declared on float32 arguments and as its float64 variant
when every float argument is float64.

This runs on every call, so it keeps to dictionary lookups and one pass.
"""

import sys

import numpy as np

FLOAT_TYPES = ("float16", "float32", "float64")

_NUMPY_NAMES = {np.dtype(t): np.dtype(t).name for t in
                (np.float16, np.float32, np.float64, np.int8, np.uint8, np.int16, np.int32,
                 np.int64, np.uint16, np.uint32, np.uint64, np.bool_, np.complex64)}
_torch_names = {}  # torch.dtype -> 'float32', filled on first use


def is_torch_tensor(x):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def dtype_name(x):
    """'float32', 'int64', ... for a numpy array or torch tensor."""
    dtype = x.dtype
    name = _NUMPY_NAMES.get(dtype) if isinstance(dtype, np.dtype) else _torch_names.get(dtype)
    if name is None:
        name = np.dtype(dtype).name if isinstance(dtype, np.dtype) else \
            str(dtype).replace("torch.", "")
        if not isinstance(dtype, np.dtype):
            _torch_names[dtype] = name
    return name


def describe(decl):
    """'float32[N, K]', or 'float32' for a scalar."""
    return f"{decl.type}[{', '.join(decl.shape)}]" if decl.shape else decl.type


def order(fn_name, inputs, args, kwargs):
    """Positional and keyword arguments in input order (TypeError otherwise)."""
    if not kwargs and len(args) == len(inputs):
        return list(args)
    names = [i.name for i in inputs]
    if len(args) > len(names):
        raise TypeError(f"{fn_name}() takes {len(names)} arguments ({', '.join(names)}), "
                        f"got {len(args)}")
    values = list(args) + [None] * (len(names) - len(args))
    for key, value in kwargs.items():
        if key not in names:
            raise TypeError(f"{fn_name}() got an unexpected argument '{key}' "
                            f"(inputs: {', '.join(names)})")
        position = names.index(key)
        if position < len(args):
            raise TypeError(f"{fn_name}() got argument '{key}' twice")
        values[position] = value
    missing = [n for n, v in zip(names, values) if v is None]
    if missing:
        raise TypeError(f"{fn_name}() missing argument '{missing[0]}' "
                        f"(inputs: {', '.join(names)})")
    return values


def _array_like(decl, value, allow_meta, devices):
    """The value as a numpy array or torch tensor of the declared rank on one of
    ``devices`` (device types: "cpu", and "cuda" for a function compiled for the GPU; a
    number for a scalar input becomes an array of the declared type)."""
    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        if decl.shape:
            raise ValueError(f"argument '{decl.name}': expected a tensor of rank "
                             f"{len(decl.shape)} ({describe(decl)}), got the number {value!r}")
        return np.asarray(value, dtype=decl.type)
    if not isinstance(value, np.ndarray):
        if not is_torch_tensor(value):
            raise TypeError(f"argument '{decl.name}': expected a numpy array or torch tensor "
                            f"({describe(decl)}), got {type(value).__name__}")
        device = value.device.type
        if device not in devices and not (allow_meta and device == "meta"):
            expected = " or ".join(d.upper() for d in devices)
            hint = (" (compile with target='cuda' to run on the GPU)" if device == "cuda"
                    else "")
            raise TypeError(f"argument '{decl.name}': expected a {expected} tensor, got "
                            f"device {value.device}{hint}")
    if len(value.shape) != len(decl.shape):
        raise ValueError(f"argument '{decl.name}': expected rank {len(decl.shape)} "
                         f"({describe(decl)}), got rank {len(value.shape)} "
                         f"(shape [{', '.join(str(s) for s in value.shape)}])")
    return value


def _float64_variant(inputs, values, dtypes):
    """True to run the float64 variant, False to run as declared; TypeError otherwise."""
    as_declared = as_float64 = True
    for decl, got in zip(inputs, dtypes):
        if decl.type in FLOAT_TYPES:
            as_declared = as_declared and got == decl.type
            as_float64 = as_float64 and got == "float64"
        elif got != decl.type:
            raise TypeError(f"argument '{decl.name}': expected dtype {decl.type}, got {got}")
    if as_declared:
        return False
    if as_float64:
        return True
    # Neither: blame the first argument that disagrees with the first float one.
    floats = [(d, got) for d, got in zip(inputs, dtypes) if d.type in FLOAT_TYPES]
    lead_decl, lead = floats[0]
    if lead not in (lead_decl.type, "float64"):
        raise TypeError(f"argument '{lead_decl.name}': expected dtype {lead_decl.type} "
                        f"(or float64), got {lead}")
    for decl, got in floats[1:]:
        expected = decl.type if lead == lead_decl.type else "float64"
        if got != expected:
            raise TypeError(f"argument '{decl.name}': expected dtype {expected} (argument "
                            f"'{lead_decl.name}' is {lead}), got {got}")
    raise AssertionError("unreachable: the float dtypes agree")


def check(fn_name, inputs, args, kwargs, allow_meta=False, devices=("cpu",)):
    """Ordered values (numbers made arrays) and whether to run the float64 variant.
    ``allow_meta``: also accept meta tensors (a fake kernel's shape inference);
    ``devices``: the device types a tensor may be on (a GPU target's: also "cuda")."""
    values = order(fn_name, inputs, args, kwargs)
    values = [_array_like(d, v, allow_meta, devices) for d, v in zip(inputs, values)]
    if allow_meta or len(devices) > 1:
        _check_one_device(inputs, values)
    return values, _float64_variant(inputs, values, [dtype_name(v) for v in values])


def _check_one_device(inputs, values):
    """Meta tensors (shape inference) mixed with CPU ones are an error, as in PyTorch:
    the results would otherwise be made on one device and never computed; so are CUDA
    tensors mixed with CPU ones or with numpy arrays (numbers are fine: they are copied)."""
    tensors = [(d, v) for d, v in zip(inputs, values) if is_torch_tensor(v)]
    if not tensors:
        return
    first_decl, first = tensors[0][0], tensors[0][1].device
    for decl, value in zip(inputs, values):
        if is_torch_tensor(value):
            got = f"device {value.device}"
            if value.device == first:
                continue
        elif first.type == "cuda" and isinstance(value, np.ndarray) and value.ndim > 0:
            got = "a numpy array"
        else:
            continue
        raise TypeError(f"argument '{decl.name}': expected a tensor on {first} like "
                        f"argument '{first_decl.name}', got {got} (all tensor arguments "
                        f"must be on one device)")


def to_numpy(value):
    """A C-contiguous, aligned numpy array in the machine's byte order with the same
    values (no copy when possible): the compiled code reads the buffer as it is, so a
    big-endian (``>f4``), strided or misaligned array is copied first."""
    if not isinstance(value, np.ndarray):
        value = value.detach().contiguous().numpy()
    flags = value.flags
    if flags.c_contiguous and flags.aligned and value.dtype.isnative:
        return value
    return np.require(value, value.dtype.newbyteorder("="), "CA")
