"""Translates one exported graph (Core ATen, after ``run_decompositions``) into one Tenet
function: inputs for the parameters, buffers and user inputs, one statement (or a few)
per op under a comment naming the module and the user's source line, outputs for the
user's outputs and for the buffers the graph updates.

Each op is translated by the function registered for it in ``ops`` (one per Core ATen
op); it receives this ``Translator`` and the node's arguments with graph values replaced
by what the translator knows of them (``values.Tensor``, ``values.Size``, numbers).
"""

import operator
import re

import torch

from . import names, ops, values
from .errors import TorchImportError, node_origin
from .values import Size, Tensor, broadcast_indices


class Input:
    """An input of the translated function: its Tenet name, what it is ('parameter',
    'buffer', 'user', 'constant', 'dropout'), the state_dict key / user argument position
    / constant name, and its declaration."""

    def __init__(self, name, kind, key, tensor, extra=None):
        self.name, self.kind, self.key, self.tensor, self.extra = name, kind, key, tensor, extra

    def declaration(self):
        t = self.tensor
        shape = f"({', '.join(t.shape)})" if t.shape else ""
        return f"{t.dtype}{shape} {self.name}"


class Output:
    """An output: its Tenet name, 'user' or 'buffer', and the user output position or the
    buffer's state_dict key."""

    def __init__(self, name, kind, key):
        self.name, self.kind, self.key = name, kind, key


class Translator:
    def __init__(self, exported, function_name):
        self.exported = exported
        self.function_name = function_name
        # tensors may not share a name with a function (this one, or its one-mode name)
        self.namer = names.Namer(reserved=(function_name, function_name.rsplit("_", 1)[0]))
        self.sizes = {}            # sympy symbol name -> Tenet size name
        self.values = {}           # fx node -> what it is in Tenet
        self.inputs = []           # Input, in declaration order
        self.made_constants = {}   # name -> tensor: constants the translation computes
        self.outputs = []          # Output
        self.lines = []            # the body
        self._origin = None        # (module path, kind, location, code) of the node at hand
        self._last_comment = None
        self.node = None

    # -- the walk --------------------------------------------------------------------------

    def run(self):
        graph = self.exported.graph_module.graph
        self._preferred = self._buffer_update_names(graph)
        self._name_sizes(graph)
        self._declare_inputs(graph)
        for node in graph.nodes:
            if node.op == "call_function":
                self.node = node
                self._origin = node_origin(node)
                self.values[node] = self._call(node)
            elif node.op == "output":
                self._declare_outputs(node)
        return self.source()

    def _buffer_update_names(self, graph):
        """{node: '<buffer>_new'} for the nodes whose value the graph writes to a buffer."""
        output = next(n for n in graph.nodes if n.op == "output")
        found = {}
        for spec, result in zip(self.exported.graph_signature.output_specs, output.args[0]):
            if spec.kind.name in ("BUFFER_MUTATION", "PARAMETER_MUTATION") and \
                    isinstance(result, torch.fx.Node):
                found[result] = spec.target.replace(".", "_") + "_new"
        return found

    def _call(self, node):
        target = node.target
        args = self._resolve(node.args)
        kwargs = self._resolve(node.kwargs)
        if target is operator.getitem:
            whole, k = args
            part = whole[k]
            if part is None:
                self.fail(f"output {k} of {node.args[0].target} is not supported (such as "
                          f"max pooling's indices: only the outputs a forward uses are)",
                          op=str(node.args[0].target))
            return part
        if target in _SIZE_ARITHMETIC:
            return _size_arithmetic(target, *args)
        translate = ops.REGISTRY.get(_op_name(target))
        if translate is None:
            self.fail(f"unsupported op {_op_name(target)} (the supported ops: docs/import.md)",
                      op=_op_name(target))
        try:
            return translate(self, *args, **kwargs)
        except (TorchImportError, KeyboardInterrupt):
            raise
        except Exception as error:  # noqa: BLE001 (a bug of the translator: say where)
            from .._tenet import InternalError
            path, _, location, _ = self._origin
            raise InternalError(f"tenet.from_torch could not translate {_op_name(target)} "
                                f"(node '{node.name}', module '{path}', {location}): "
                                f"{type(error).__name__}: {error}") from error

    def _resolve(self, arg):
        if isinstance(arg, torch.fx.Node):
            if arg not in self.values:
                raise TorchImportError(f"graph value '{arg.name}' used before it is defined")
            return self.values[arg]
        if isinstance(arg, (list, tuple)):
            return type(arg)(self._resolve(a) for a in arg)
        if isinstance(arg, dict):
            return {k: self._resolve(v) for k, v in arg.items()}
        return arg

    # -- sizes -----------------------------------------------------------------------------

    def _name_sizes(self, graph):
        for node in graph.nodes:
            if node.op != "placeholder":
                continue
            for d in getattr(node.meta.get("val"), "shape", ()):
                if isinstance(d, torch.SymInt):
                    for symbol in sorted(d.node.expr.free_symbols, key=str):
                        if str(symbol) not in self.sizes:
                            name = "B" if not self.sizes else f"S{len(self.sizes)}"
                            self.sizes[str(symbol)] = name
                            self.namer.reserve(name)

    def size(self, d):
        """A dimension (int or SymInt) as a Tenet size expression."""
        if isinstance(d, torch.SymInt):
            expr = d.node.expr
            if expr.is_Integer:
                return str(int(expr))
            text = str(expr)
            for symbol, name in self.sizes.items():
                text = _replace_word(text, symbol, name)
            return text
        if isinstance(d, Size):
            return d.text
        return str(int(d))

    def shape(self, node=None, k=0):
        """The shape of a node's value (the node at hand by default; output ``k`` of an
        op with several), as size texts."""
        val = _output(node or self.node, k)
        return tuple(self.size(d) for d in val.shape)

    def dtype(self, node=None, k=0):
        val = _output(node or self.node, k)
        found = values.tenet_type(val.dtype)
        if found is None:
            self.fail(f"dtype {str(val.dtype).replace('torch.', '')} is not supported (Tenet "
                      f"has float32, float64, integers and bool; a float16 or bfloat16 model "
                      f"imports with compute_dtype=torch.float32)")
        return found

    # -- inputs and outputs ----------------------------------------------------------------

    def _declare_inputs(self, graph):
        specs = {s.arg.name: s for s in self.exported.graph_signature.input_specs}
        kinds = {"PARAMETER": "parameter", "BUFFER": "buffer", "USER_INPUT": "user",
                 "CONSTANT_TENSOR": "constant"}
        user = 0
        for node in graph.nodes:
            if node.op != "placeholder":
                continue
            spec = specs[node.name]
            kind = kinds.get(spec.kind.name)
            val = node.meta.get("val")
            self.node, self._origin = node, ("", "", None, None)
            if kind is None or not isinstance(val, torch.Tensor):
                if kind == "user" and val is not None and not isinstance(val, torch.Tensor):
                    self.fail(f"input '{node.name}' is a {type(val).__name__}, not a tensor: "
                              f"pass tensors only")
                self.fail(f"input '{node.name}' ({spec.kind.name}) is not supported")
            key = spec.target if kind != "user" else user
            user += kind == "user"
            if kind == "constant" and val.numel() == 0:
                # an empty constant (a key/value cache before its first step): no
                # values to pass, so not an input; the ops that take it (cat) skip it
                self.values[node] = Tensor("", self.shape(node), self.dtype(node),
                                           literal="0")
                continue
            wanted = spec.target if kind in ("parameter", "buffer") else node.name
            if kind == "user" and len(wanted) == 1:
                wanted += "_in"  # single letters are index names
            name = self.namer(wanted)
            tensor = Tensor(name, self.shape(node), self.dtype(node))
            self.inputs.append(Input(name, kind, key, tensor))
            self.values[node] = tensor

    def add_constant(self, wanted, value):
        """A constant the translation computes (interpolation indices and weights): an
        input of kind 'constant' whose value goes into the weights file."""
        name = self.namer(wanted)
        tensor = Tensor(name, tuple(str(d) for d in value.shape),
                        values.tenet_type(value.dtype))
        self.inputs.append(Input(name, "constant", name, tensor))
        self.made_constants[name] = value
        return tensor

    def add_input(self, wanted, shape, dtype, kind, extra=None):
        """A new input the module supplies (a dropout mask): its Tensor."""
        name = self.namer(wanted)
        tensor = Tensor(name, shape, dtype)
        self.inputs.append(Input(name, kind, None, tensor, extra))
        return tensor

    def _declare_outputs(self, node):
        self._origin = ("", "", None, None)
        self._last_comment = None
        specs = self.exported.graph_signature.output_specs
        results = node.args[0]
        taken = set()
        user = 0
        for spec, result in zip(specs, results):
            value = self._resolve(result)
            if spec.kind.name == "USER_OUTPUT":
                kind, key = "user", user
                user += 1
            elif spec.kind.name in ("BUFFER_MUTATION", "PARAMETER_MUTATION"):
                # a parameter the forward changes (embedding's max_norm) is written back
                # as a buffer is
                kind, key = "buffer", spec.target
            else:
                self.fail(f"output kind {spec.kind.name} is not supported")
            if not isinstance(value, Tensor):
                self.fail(f"output {key} is not a tensor ({type(value).__name__})")
            wanted = (key.replace(".", "_") + "_new") if kind == "buffer" else f"out{key}"
            needs_copy = (value.is_view or value.literal is not None or value.name in taken
                          or any(i.name == value.name for i in self.inputs)
                          or (kind == "buffer" and value.name != wanted))
            if needs_copy:
                value = self.copy(value, wanted)
            taken.add(value.name)
            self.outputs.append(Output(value.name, kind, key))
        # the user's results first, then the buffers' new values
        self.outputs.sort(key=lambda o: o.kind != "user")

    # -- writing statements ----------------------------------------------------------------

    def new(self, wanted=None, shape=None, dtype=None):
        """A new tensor for the node at hand (its shape and dtype unless given)."""
        if wanted is None and self.node in self._preferred:
            wanted = self._preferred[self.node]
        name = self.namer(wanted or self.default_name())
        return Tensor(name, self.shape() if shape is None else shape,
                      self.dtype() if dtype is None else dtype)

    def default_name(self):
        """A name for the node at hand: its module's path ('conv1', 'layers_0') for an op
        inside a submodule, else the op's name ('relu', 'max_pool2d')."""
        path = self._origin[0] if self._origin else ""
        if path:
            return path.replace(".", "_")
        name = self.node.name
        for prefix in ("_native_", "native_", "_"):
            if name.startswith(prefix):
                name = name[len(prefix):]
        return name.replace("_with_indices", "").rstrip("_0123456789") or name

    def comment(self):
        # user text (module path, class, file and line): escaped, so it stays a comment
        path, kind, location, code = (None if part is None else names.comment_text(part)
                                      for part in self._origin)
        parts = []
        if path:
            parts.append(f"{path} ({kind})" if kind else path)
        if location:
            parts.append(f"{location}: {code}" if code else location)
        text = "# " + "  ".join(parts) if parts else None
        if text != self._last_comment:
            self._last_comment = text
            if self.lines:
                self.lines.append("")
            if text:
                self.lines.append(text)

    def statement(self, target, indices, op, rhs, reads=(), ranges=None, where=()):
        """Writes ``target(indices) op rhs``. ``ranges`` ({index: size}) are the sizes the
        statement's indices must have; those that no plain read of ``reads`` ((Tensor,
        indices) pairs) gives get a ``where`` clause, after the explicit ``where`` ones."""
        self.comment()
        clauses = list(where)
        if ranges:
            got = {}
            for tensor, at in reads:
                for index, size in tensor.plain_ranges(at).items():
                    got.setdefault(index, set()).add(size)
            named = {c.split(" in ")[0] for c in clauses}
            for index, size in ranges.items():
                # a where clause unless a read ranges it exactly (and none more widely:
                # the smallest range would win, with a note, as in TC)
                if index not in named and got.get(index, set()) != {size}:
                    clauses.append(f"{index} in 0:{size}")
        left = f"{target.name}({', '.join(indices)})" if indices else target.name
        text = f"{left} {op} {rhs}"
        if clauses:
            text += " where " + ", ".join(clauses)
        self.lines.append("  " + text)

    def elementwise(self, formula, operands, wanted=None, dtype=None, shape=None):
        """A new tensor ``out(i, ...) = formula(read, ...)``: each operand (a Tensor or a
        number) broadcast to the output's shape as PyTorch broadcasts."""
        out = self.new(wanted, shape=shape, dtype=dtype)
        idx = names.own_indices(out.rank)
        reads, texts = [], []
        for operand in operands:
            if isinstance(operand, Tensor):
                at = broadcast_indices(operand, out.shape, idx)
                texts.append(operand.read(at))
                reads.append((operand, at))
            elif isinstance(operand, Size):
                texts.append(f"({operand.text})")
            elif isinstance(operand, bool):
                texts.append("(0 == 0)" if operand else "(0 != 0)")
            else:
                texts.append(values.literal(operand))
        self.statement(out, idx, "=", formula(*texts), reads, dict(zip(idx, out.shape)))
        return out

    def copy(self, value, wanted):
        return self.elementwise(lambda x: x, [value], wanted=wanted, shape=value.shape,
                                dtype=value.dtype)

    def materialise(self, value, wanted=None):
        """A value that is a tensor of its own (a view or constant is copied)."""
        if isinstance(value, Tensor) and not value.is_view and value.literal is None:
            return value
        return self.copy(value, wanted or f"{self.node.name}_in")

    def fail(self, what, op=None):
        path, kind, location, code = self._origin or ("", "", None, None)
        raise TorchImportError(what, op=op, module_path=path, module_type=kind,
                               location=location, code=code)

    # -- the result ------------------------------------------------------------------------

    def signature(self):
        decls = ",\n    ".join(i.declaration() for i in self.inputs)
        outs, line = [], ""
        for o in self.outputs:
            if line and len(line) + len(o.name) > 80:
                outs.append(line.rstrip())
                line = ""
            line += o.name + ", "
        outs.append(line.rstrip(", "))
        outs = ",\n        ".join(o.rstrip(",") for o in outs)
        return f"def {self.function_name}(\n    {decls})\n    -> ({outs})"

    def body(self):
        return "\n".join(self.lines)

    def source(self):
        return f"{self.signature()} {{\n{self.body()}\n}}\n"


def _output(node, k):
    val = node.meta["val"]
    return val[k] if isinstance(val, (tuple, list)) else val


def _op_name(target):
    return str(target)  # 'aten.convolution.default'; Python functions by their name


def _replace_word(text, word, by):
    return re.sub(rf"\b{re.escape(word)}\b", by, text)


_SIZE_ARITHMETIC = {operator.mul: "*", operator.add: "+", operator.sub: "-",
                    operator.floordiv: "/"}


def _size_arithmetic(target, a, b):
    if not isinstance(a, Size) and not isinstance(b, Size):
        return {"*": a * b, "+": a + b, "-": a - b, "/": a // b}[_SIZE_ARITHMETIC[target]]
    return Size(f"{_wrap(a)} {_SIZE_ARITHMETIC[target]} {_wrap(b)}")


def _wrap(x):
    text = str(x)
    return text if text.replace("_", "").isalnum() else f"({text})"
