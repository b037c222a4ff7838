"""Checks of what ``tenet.load`` reads: the manifest (every field, its type and what it
refers to) and the program's declarations against the manifest and the weights (names,
kinds, dtypes and shapes). Each error is a ValueError naming the file, the field or the
tensor, what was expected and what was found."""

import re

KINDS_IN = ("user", "parameter", "buffer", "constant", "dropout", "bernoulli")
KINDS_OUT = ("user", "buffer")


def check_manifest(manifest, path, key, weights):
    """``manifest`` (parsed from the metadata ``key`` of the weights file ``path``) as
    Program needs it; ``weights``: {key: tensor} of the file."""
    where = f"{path}: metadata '{key}'"
    _expect(manifest, dict, where, "the manifest", "an object")
    for field in ("entries", "functions", "parameters", "non_persistent", "state"):
        if field not in manifest:
            raise ValueError(f"{where}: the field '{field}' is missing")
    functions = _expect(manifest["functions"], dict, where, "functions", "an object")
    if not functions:
        raise ValueError(f"{where}: 'functions' is empty")
    for name, signature in functions.items():
        _check_function(name, signature, where)
    entries = _expect(manifest["entries"], dict, where, "entries", "an object")
    for mode in ("train", "eval"):
        entry = entries.get(mode)
        if entry not in functions:
            raise ValueError(f"{where}: entries.{mode} is {entry!r}, not one of the "
                             f"functions ({', '.join(functions)})")
    state = _strings(manifest, "state", where)
    for field in ("parameters", "non_persistent"):
        unknown = [k for k in _strings(manifest, field, where) if k not in state]
        if unknown:
            raise ValueError(f"{where}: {field} names '{unknown[0]}', which is not in 'state'")
    modules = _expect(manifest.get("modules", {}), dict, where, "modules", "an object")
    for module_path, kind in modules.items():
        _expect(kind, str, where, f"modules[{module_path!r}]", "a class name (a string)")
    if manifest.get("compute_dtype", "float32") != "float32":
        raise ValueError(f"{where}: compute_dtype is {manifest['compute_dtype']!r}: only "
                         f"'float32' (a float16 or bfloat16 model computed in float32)")
    tied = _expect(manifest.get("tied", {}), dict, where, "tied", "an object")
    for key, first in tied.items():
        if key not in state or first not in state or first in tied:
            raise ValueError(f"{where}: tied[{key!r}] is {first!r}: both must be keys of "
                             f"'state', the second not tied itself")
    _check_keys(manifest, where, path, weights, set(state), tied)


def _check_function(name, signature, where):
    field = f"functions[{name!r}]"
    if not _is_name(name):
        raise ValueError(f"{where}: {field}: the function name is not an identifier")
    _expect(signature, dict, where, field, "an object")
    _expect(signature.get("results"), str, where, f"{field}.results",
            "the results' structure (a string)")
    inputs = _expect(signature.get("inputs"), list, where, f"{field}.inputs", "a list")
    outputs = _expect(signature.get("outputs"), list, where, f"{field}.outputs", "a list")
    users = []
    for k, spec in enumerate(inputs):
        at = f"{field}.inputs[{k}]"
        kind = _check_spec(spec, at, where, KINDS_IN)
        shape = _expect(spec.get("shape"), list, where, f"{at}.shape", "a list of sizes")
        for d in shape:
            _expect(d, str, where, f"{at}.shape", "a list of sizes (strings)")
        if kind == "user":
            users.append(spec["key"])
        if kind in ("dropout", "bernoulli"):
            p = spec.get("p")
            top = 1 if kind == "bernoulli" else 0.999999999999  # dropout: p < 1
            if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= top:
                raise ValueError(f"{where}: {at}.p is {p!r}, not a {kind} probability "
                                 f"in [0, 1{']' if kind == 'bernoulli' else ')'}")
    if sorted(users) != list(range(len(users))):
        raise ValueError(f"{where}: {field}: the user inputs' keys are {users}, not the "
                         f"argument positions 0..{len(users) - 1}")
    for k, spec in enumerate(outputs):
        _check_spec(spec, f"{field}.outputs[{k}]", where, KINDS_OUT)
    try:
        from torch.utils import _pytree as pytree
        results = pytree.treespec_loads(signature["results"])
    except Exception as error:  # noqa: BLE001 (pytree's own errors: a malformed string)
        raise ValueError(f"{where}: {field}.results is not a results structure "
                         f"({type(error).__name__}: {error})") from None
    count = sum(spec["kind"] == "user" for spec in outputs)
    if results.num_leaves != count:
        raise ValueError(f"{where}: {field}.results has {results.num_leaves} tensors, but "
                         f"the function returns {count}")


def _check_spec(spec, at, where, kinds):
    _expect(spec, dict, where, at, "an object")
    if not _is_name(spec.get("name")):
        raise ValueError(f"{where}: {at}.name is {spec.get('name')!r}, not an identifier")
    kind = spec.get("kind")
    if kind not in kinds:
        raise ValueError(f"{where}: {at}.kind is {kind!r}, not one of {', '.join(kinds)}")
    key = spec.get("key")
    wanted = {"user": int, "dropout": type(None), "bernoulli": type(None)}.get(kind, str)
    if not isinstance(key, wanted) or isinstance(key, bool) or (kind == "user" and key < 0):
        what = {int: "an argument position", str: "a state_dict key", type(None): "null"}
        raise ValueError(f"{where}: {at}.key is {key!r}, not {what[wanted]}")
    return kind


def _check_keys(manifest, where, file, weights, state, tied):
    """Each key the signatures read is in the state or the weights, and each tensor the
    program needs is in the weights file (one copy of a tied tensor)."""
    needed = [k for k in state if k not in tied]
    for name, signature in manifest["functions"].items():
        for k, spec in enumerate(signature["inputs"]):
            if spec["kind"] in ("parameter", "buffer") and spec["key"] not in state:
                raise ValueError(f"{where}: functions[{name!r}].inputs[{k}].key "
                                 f"{spec['key']!r} is not in 'state'")
            if spec["kind"] == "constant":
                needed.append(spec["key"])
        for k, spec in enumerate(signature["outputs"]):
            if spec["kind"] == "buffer" and spec["key"] not in state:
                raise ValueError(f"{where}: functions[{name!r}].outputs[{k}].key "
                                 f"{spec['key']!r} is not in 'state'")
    missing = [k for k in needed if k not in weights]
    if missing:
        raise ValueError(f"{file}: the tensor '{missing[0]}' is missing (the manifest "
                         f"names it; the file holds {len(weights)} tensors)")
    extra = sorted(set(weights) - set(needed))
    if extra:
        raise ValueError(f"{file}: the tensor '{extra[0]}' is not one the manifest names")


def check_program(manifest, weights, checked, source, filename, weights_path):
    """The program's functions declare the inputs and outputs the manifest lists, in its
    order and under its names, and each weight has the dtype and shape its declaration
    gives: weights are passed by position, so a declaration reordered or renamed in
    model.tn must not silently swap them."""
    from .. import function as tenet_function
    present = set(checked.function_names())
    for name, signature in manifest["functions"].items():
        if name not in present:
            raise ValueError(f"{filename}: no function '{name}' (the manifest of "
                             f"{weights_path} has it; the program defines "
                             f"{', '.join(sorted(present))})")
        function = tenet_function.Function(checked, source, name)
        for what, specs, decls in (("input", signature["inputs"], function.inputs),
                                   ("output", signature["outputs"], function.outputs)):
            expected = [spec["name"] for spec in specs]
            actual = [decl.name for decl in decls]
            if expected != actual:
                k = next((k for k, (a, b) in enumerate(zip(expected, actual)) if a != b),
                         min(len(expected), len(actual)))
                raise ValueError(
                    f"{filename}: {name}'s {what} {k} is {_nth(actual, k)}, but the manifest "
                    f"of {weights_path} has {_nth(expected, k)} there ({what}s are matched "
                    f"by position: declarations reordered, renamed, added or removed)")
        for spec, decl in zip(signature["inputs"], function.inputs):
            if spec["kind"] in ("parameter", "buffer", "constant"):
                key = manifest.get("tied", {}).get(spec["key"], spec["key"])
                _check_tensor(weights[key], decl, f"{filename}: {name}'s input "
                              f"'{decl.name}'", f"{weights_path}: the tensor '{key}'")


def _check_tensor(tensor, decl, declared, stored):
    shape = tuple(str(d) for d in tensor.shape)
    same_shape = len(shape) == len(decl.shape) and all(
        a == b for a, b in zip(shape, decl.shape) if str(b).isdigit())
    float_declared = decl.type.startswith("float") or decl.type == "double"
    if not same_shape or float_declared != tensor.is_floating_point():
        kind = str(tensor.dtype).replace("torch.", "")
        raise ValueError(f"{stored} is {kind} [{', '.join(shape)}], but {declared} is "
                         f"declared {decl.type} [{', '.join(decl.shape)}]")


def _nth(names, k):
    return f"'{names[k]}'" if k < len(names) else "missing"


def _strings(manifest, field, where):
    values = _expect(manifest[field], list, where, field, "a list of state_dict keys")
    for value in values:
        _expect(value, str, where, field, "a list of state_dict keys (strings)")
    return values


def _expect(value, kind, where, field, what):
    if not isinstance(value, kind):
        raise ValueError(f"{where}: {field} is {_short(value)}, not {what}")
    return value


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_name(name):
    return isinstance(name, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) is not None
