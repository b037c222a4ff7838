"""Symbolic sizes in Python: the shapes the compiler declares, evaluated here.

A function's interface gives each dimension as the text of a size expression
(``"B"``, ``"(H - 9) / 2 + 1"``, ``"min(N, M)"``; ``/`` is floor division).
This module solves the size parameters from actual input shapes and
evaluates output shapes, with plain ints or with PyTorch's symbolic ints
(``torch.SymInt``), so a fake/meta kernel can infer output shapes under
``torch.compile`` without running anything. The C++ side checks the same
things again when a kernel runs (``ir::bind_sizes``).
"""

import ast
import functools


@functools.lru_cache(maxsize=None)
def _parse(text):
    tree = ast.parse(text, mode="eval").body
    _validate(tree, text)
    return tree


_BINARY = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def _validate(node, text):
    if isinstance(node, ast.BinOp) and isinstance(node.op, _BINARY):
        _validate(node.left, text)
        _validate(node.right, text)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        _validate(node.operand, text)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id not in ("min", "max") or len(node.args) != 2 or node.keywords:
            raise ValueError(f"unexpected size expression {text!r}")
        for arg in node.args:
            _validate(arg, text)
    elif isinstance(node, ast.Constant) and isinstance(node.value, int):
        pass
    elif not isinstance(node, ast.Name):
        raise ValueError(f"unexpected size expression {text!r}")


def symbols(text):
    """The size parameters an expression mentions."""
    tree = _parse(text)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - {"min", "max"}


def as_symbol(text):
    """The parameter name when the expression is exactly one, else None."""
    tree = _parse(text)
    return tree.id if isinstance(tree, ast.Name) else None


def evaluate(text, sizes, sym_min=min, sym_max=max):
    """Evaluates under ``sizes`` (name -> int or SymInt). ``/`` floors, as in the IR."""

    def ev(node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in sizes:
                raise ValueError(f"size parameter {node.id!r} is not bound")
            return sizes[node.id]
        if isinstance(node, ast.UnaryOp):
            return -ev(node.operand)
        if isinstance(node, ast.Call):
            pick = sym_min if node.func.id == "min" else sym_max
            return pick(ev(node.args[0]), ev(node.args[1]))
        left, right = ev(node.left), ev(node.right)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        return left // right

    return ev(_parse(text))


def describe(type_name, shape):
    """``float32[N, K]`` (``float32 scalar`` for rank 0)."""
    return f"{type_name}[{', '.join(shape)}]" if shape else f"{type_name} scalar"


def bind(inputs, shapes, given=None):
    """Size parameters from actual shapes.

    ``inputs`` are the declared tensors (``.name``, ``.type``, ``.shape``: size
    expression texts), ``shapes`` one actual shape per input (ints or SymInts;
    ranks already checked). ``given`` fixes parameters no input determines.
    Raises ValueError naming the input, the expected and the actual shape.
    """
    sizes = dict(given or {})
    deferred = []
    for decl, shape in zip(inputs, shapes):
        for dim, actual in zip(decl.shape, shape):
            name = as_symbol(dim)
            if name is not None and name not in sizes:
                sizes[name] = actual
            else:
                deferred.append((decl, shape, dim, actual))
    for decl, shape, dim, actual in deferred:
        unbound = symbols(dim) - sizes.keys()
        if unbound:
            raise ValueError(f"input '{decl.name}': cannot infer size parameter "
                             f"'{sorted(unbound)[0]}' of dimension {dim} from the input shapes")
        if evaluate(dim, sizes) != actual:
            expected = [str(evaluate(d, sizes)) if not (symbols(d) - sizes.keys()) else d
                        for d in decl.shape]
            raise ValueError(f"input '{decl.name}': expected {describe(decl.type, decl.shape)}"
                             f" = [{', '.join(expected)}], got {decl.type}"
                             f"[{', '.join(str(s) for s in shape)}]")
    return sizes
