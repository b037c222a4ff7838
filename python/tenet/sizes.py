"""Symbolic sizes in Python: the shapes the compiler declares, evaluated here.

A function's interface gives each dimension as a ``Size``: the text of the size
expression (``"B"``, ``"(H - 9) / 2 + 1"``, ``"min(N, M)"``, what messages show)
and its tree, which the compiler builds from its own normal form (``ir::SizeExpr``)
rather than Python re-parsing the text. This module solves the size parameters
from actual input shapes and evaluates output shapes, with plain ints or with
PyTorch's symbolic ints (``torch.SymInt``), so a fake/meta kernel can infer output
shapes under ``torch.compile`` without running anything. The C++ side checks the
same things again when a kernel runs (``ir::bind_sizes``).
"""


class Size(str):
    """A declared dimension: its text (a ``str``: it prints, joins and compares as the
    text) and ``tree``: an int, a size parameter's name, or a tuple ``("+", terms...)``,
    ``("*", a, b)``, ``("//", a, divisor)`` (floor division), ``("min", a, b)`` or
    ``("max", a, b)``."""

    def __new__(cls, text, tree):
        size = super().__new__(cls, text)
        size.tree = tree
        return size

    def __getnewargs__(self):
        return str(self), self.tree


def _tree(size):
    tree = getattr(size, "tree", None)
    if tree is None:
        raise TypeError(f"expected a size the compiler declared (tenet.sizes.Size, e.g. an "
                        f"entry of TensorDecl.shape), got {size!r}")
    return tree


def _symbols(tree, out):
    if isinstance(tree, str):
        out.add(tree)
    elif isinstance(tree, tuple):
        for operand in tree[1:]:
            _symbols(operand, out)
    return out


def symbols(size):
    """The size parameters an expression mentions."""
    return _symbols(_tree(size), set())


def as_symbol(size):
    """The parameter name when the expression is exactly one, else None."""
    tree = _tree(size)
    return tree if isinstance(tree, str) else None


def evaluate(size, sizes, sym_min=min, sym_max=max):
    """Evaluates under ``sizes`` (name -> int or SymInt). ``//`` floors, as in the IR."""

    def ev(node):
        if isinstance(node, int):
            return node
        if isinstance(node, str):
            if node not in sizes:
                raise ValueError(f"size parameter {node!r} is not bound")
            return sizes[node]
        op, operands = node[0], [ev(a) for a in node[1:]]
        if op == "+":
            total = operands[0]
            for term in operands[1:]:
                total = total + term
            return total
        if op == "*":
            return operands[0] * operands[1]
        if op == "//":
            return operands[0] // operands[1]
        if op == "min":
            return sym_min(operands[0], operands[1])
        if op == "max":
            return sym_max(operands[0], operands[1])
        raise ValueError(f"unknown size operation {op!r} in {size!r}")

    return ev(_tree(size))


def describe(type_name, shape):
    """``float32[N, K]`` (``float32 scalar`` for rank 0)."""
    return f"{type_name}[{', '.join(shape)}]" if shape else f"{type_name} scalar"


def bind(inputs, shapes, given=None):
    """Size parameters from actual shapes.

    ``inputs`` are the declared tensors (``.name``, ``.type``, ``.shape``: size
    ``Size``s), ``shapes`` one actual shape per input (ints or SymInts;
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
