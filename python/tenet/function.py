"""Compiled Tenet functions as Python callables.

``tenet.compile(source, entry)`` checks the program at once (a
``tenet.CompileError`` carries the diagnostic with line, column and caret)
and returns a ``Function``. Calling it JIT-compiles on first use (cached on
disk by content hash; see ``$TENET_CACHE_DIR``) and runs the generated code:

    f = tenet.compile(SOURCE, "softmax")
    p = f(z)                              # numpy in, numpy out; torch in, torch out
    g = f.grad(wrt=["w"], output="loss")  # a Function: outputs, then d_w
    f.backward                            # the vector-Jacobian program torch uses

A function declared with ``float`` runs as declared on float32 arguments and
as a float64 variant (compiled separately, on demand) when every float
argument is float64. Torch tensors that require grad go through the
function's PyTorch operator (``tenet.torch_op``), so autograd sees the call.
"""

import collections
import collections.abc
import hashlib
import numbers
import os
import sys
import warnings

import numpy as np

from . import _tenet
from . import arguments
from .sizes import Size

TensorDecl = collections.namedtuple("TensorDecl", "name type shape updates gradient_of",
                                    defaults=(None, None))
TensorDecl.__doc__ = """A declared input or output: name, element type ('float32'), shape
(one tenet.sizes.Size per dimension: its text, 'N', '(H - 9) / 2 + 1', and the compiler's
tree of it, which tenet.sizes evaluates); for an output that
updates an input in place (``y(i) += x(i)`` onto a declared output ``y``), ``updates`` is
that input's position, else None; for an output of a gradient that is the gradient of an
input, ``gradient_of`` is that input's position (as AD marked it, whatever its name), else
None."""
Signature = collections.namedtuple("Signature", "name size_params inputs outputs")

# The JIT options that change what a compiled function does (not where it is cached or
# how much it prints): part of Function.key.
_BEHAVIOUR_OPTIONS = ("index_checks", "openmp", "cxx", "target")

# compile(target=...): the driver's target of each (driver/target.h, docs/cuda.md). The GPU
# targets run on the device's memory (CUDA tensors; for cuda-emulated, whose device memory is
# the host's, CPU tensors), nothing copied; numpy arrays are copied to the device and back.
_TARGETS = {"cpu": "cpp", "cuda-emulated": "cuda-emulated", "cuda": "cuda"}


def _signature(info):
    """The compiler's FunctionInfo as plain tuples (read once, not per call)."""
    def position(k):
        return k if k >= 0 else None

    def shape(t):
        return tuple(Size(text, tree) for text, tree in zip(t.shape, t.size_trees))

    decls = [[TensorDecl(t.name, t.type, shape(t), position(t.updates),
                         position(t.gradient_of)) for t in ts]
             for ts in (info.inputs, info.outputs)]
    return Signature(info.name, tuple(info.size_params), tuple(decls[0]), tuple(decls[1]))


class Function:
    """One function of a checked program, compiled on first call (per float dtype)."""

    def __init__(self, program, source, entry, grad=None, sizes=None, jit=None,
                 static_sizes=None):
        self._program = program
        self._source = source
        self._entry = entry
        self._grad = grad  # a _tenet.GradRequest, or None for the entry itself
        self._sizes = dict(sizes or {})
        self._static_sizes = dict(static_sizes or {})  # compiled in as constants
        self._jit = dict(jit or {})
        self._kernels = {}  # float64 flag -> _tenet.Kernel
        self._torch_op = None
        self._info = _signature(program.info(self._variant(False)))

    # -- what it is ------------------------------------------------------------------------

    @property
    def name(self):
        """The IR function's name: the entry, or ``<entry>_grad``."""
        return self._info.name

    @property
    def inputs(self):
        """Declared inputs (``.name``, ``.type``, ``.shape`` as size expressions)."""
        return list(self._info.inputs)

    @property
    def outputs(self):
        return list(self._info.outputs)

    @property
    def input_names(self):
        return [i.name for i in self._info.inputs]

    @property
    def output_names(self):
        return [o.name for o in self._info.outputs]

    @property
    def size_params(self):
        return list(self._info.size_params)

    @property
    def sizes(self):
        """The size parameters fixed at compile time (``sizes=``)."""
        return dict(self._sizes)

    @property
    def source(self):
        """This function as source in the language (for a gradient: the derived backward)."""
        return self._program.unparse(self._variant(False))

    @property
    def static_sizes(self):
        """The size parameters compiled in as constants (``specialised``)."""
        return dict(self._static_sizes)

    def specialised(self, sizes):
        """This function compiled for these sizes: ``sizes`` ({name: int}) binds size
        parameters as constants before differentiation and optimisation, so that the
        compiler's cost rules and the generated loops see the numbers (for instance,
        whether a convolution's input gradient is one GEMM over a packed weight or a GEMM
        into columns can hinge on a batch of 2 against 32). Inputs must then have those
        sizes (a BindError otherwise). Gradients derived from it keep them."""
        checked = checked_sizes(sizes)
        _check_size_names(self, checked, "specialised")
        for name, value in checked.items():
            if name in self._sizes and self._sizes[name] != value:
                raise ValueError(f"specialised: '{name}' = {value}, but sizes= gives "
                                 f"{self._sizes[name]}")
        runtime = {k: v for k, v in self._sizes.items() if k not in checked}
        return Function(self._program, self._source, self._entry, self._grad, runtime,
                        self._jit, {**self._static_sizes, **checked})

    @property
    def key(self):
        """A short hash of what defines this function: source, entry, gradient, sizes and
        every compile option that changes what the code does (index checks, OpenMP, the
        compiler), so that no cache (operators by name, imported programs) hands out a
        function made with other options."""
        grad = self._grad
        behaviour = {k: v for k, v in self._jit.items() if k in _BEHAVIOUR_OPTIONS}
        parts = [self._source, self._entry, repr(sorted(self._sizes.items())),
                 "" if grad is None else _request_key(grad), repr(sorted(behaviour.items()))]
        if self._static_sizes:  # (keys of unspecialised functions as before)
            parts.append("static " + repr(sorted(self._static_sizes.items())))
        text = "\0".join(parts)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def __repr__(self):
        ins = ", ".join(f"{arguments.describe(i)} {i.name}" for i in self._info.inputs)
        return f"<tenet.Function {self.name}({ins}) -> ({', '.join(self.output_names)})>"

    # -- gradients -------------------------------------------------------------------------

    def grad(self, wrt=None, output=None):
        """The gradient of a scalar output: a Function returning the outputs, then one
        gradient ``d_<input>`` per input in ``wrt`` (default: every float input).
        ``output`` defaults to the only output, or the only float scalar among several."""
        return self._derived(grad_request(wrt, output))

    def vjp(self, wrt=None, output=None, half="both"):
        """Vector-Jacobian products: a Function taking the inputs, then one cotangent
        ``d_<output>`` per float output (or only for ``output``: one output's name or a
        list of them, whose cotangents come in the function's output order), returning
        the outputs, then ``d_<input>`` per input in ``wrt`` (default: every float
        input). ``half`` cuts that program in two (docs/python.md, "Saved values"):
        "forward" returns the outputs, then the values the backward reads; "backward"
        takes the inputs, then those values (named as the forward's outputs), then the
        cotangents, and returns the gradients."""
        return self._derived(grad_request(wrt, output, vjp=True, half=half))

    @property
    def backward(self):
        """The derived backward: vector-Jacobian products of every float output with
        respect to every float input (what the PyTorch operator's autograd runs)."""
        return self.vjp()

    def _derived(self, request):
        if self._grad is not None:
            raise ValueError(f"'{self.name}' is already a gradient; differentiate the entry")
        return Function(self._program, self._source, self._entry, request, self._sizes,
                        self._jit, self._static_sizes)

    # -- running ---------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        """Runs on numpy arrays or torch tensors (one per input, by position or name);
        returns the same kind: one output, or a tuple of them."""
        values, float64 = arguments.check(self.name, self._info.inputs, args, kwargs,
                                          devices=self.devices)
        if self._grad is None and _needs_autograd(values):
            return self.torch_op()(*values)
        self._check_updated(args, kwargs)
        if any(arguments.is_torch_tensor(v) for v in values):
            outputs = self.run_tensors(values, float64)
        else:
            outputs = self.run(values, float64)
        outputs = self._update_in_place(values, outputs)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _check_updated(self, args, kwargs):
        """An output that updates an input (``updates``) is written back into the
        caller's argument, which must therefore be a writable array or tensor."""
        updated = [out for out in self._info.outputs if out.updates is not None]
        if not updated:
            return
        given = arguments.order(self.name, self._info.inputs, args, kwargs)
        for out in updated:
            arg = given[out.updates]
            if arguments.is_torch_tensor(arg) or (isinstance(arg, np.ndarray) and
                                                  arg.flags.writeable):
                continue
            got = "a read-only array" if isinstance(arg, np.ndarray) else type(arg).__name__
            raise TypeError(f"argument '{out.name}': output '{out.name}' is updated in place, "
                            f"so it must be a writable numpy array or torch tensor (got {got})")

    def _update_in_place(self, values, outputs):
        """Writes each updated output into the caller's argument and returns that."""
        outputs = list(outputs)
        for i, out in enumerate(self._info.outputs):
            if out.updates is None:
                continue
            target = values[out.updates]
            if arguments.is_torch_tensor(target):
                torch = sys.modules["torch"]
                with torch.no_grad():
                    target.copy_(outputs[i] if arguments.is_torch_tensor(outputs[i])
                                 else torch.from_numpy(outputs[i]))
            else:
                np.copyto(target, outputs[i])
            outputs[i] = target
        return outputs

    @property
    def devices(self):
        """The device types its tensors may be on: ("cpu",), and "cuda" for target="cuda"."""
        return ("cpu", "cuda") if self._jit.get("target") == "cuda" else ("cpu",)

    def run(self, values, float64):
        """Runs checked values (see arguments.check); returns numpy arrays (a GPU target
        copies them to the device and back)."""
        arrays = [arguments.to_numpy(v) for v in values]
        return self.kernel(float64).run(arrays, self._sizes)

    def run_tensors(self, values, float64):
        """Runs checked values of which some are torch tensors; returns torch tensors on
        their device. A GPU target runs on the device's memory, nothing copied: CUDA
        tensors for target="cuda", CPU tensors for "cuda-emulated" (the emulator's device
        memory is the host's); other targets run as ``run``."""
        torch = sys.modules["torch"]
        device = next(v.device for v in values if arguments.is_torch_tensor(v))
        target = self._jit.get("target", "cpu")
        if not ((target == "cuda" and device.type == "cuda") or target == "cuda-emulated"):
            return [torch.from_numpy(o) for o in self.run(values, float64)]
        if device.type == "cuda" and device.index not in (None, 0):
            raise ValueError(f"'{self.name}': Tenet's CUDA target runs on cuda:0 for now; the "
                             f"tensors are on {device}")
        return self._run_on_device(values, float64, device)

    @property
    def target(self):
        """The compiler target of its kernels: "cpp" (the CPU), "cuda" or "cuda-emulated"."""
        return self._jit.get("target", "cpp")

    def run_packing(self, values, float64, pack_from):
        """CPU target: ``run_tensors`` with the outputs from ``pack_from`` on in one new
        uint8 tensor, returned last (what a forward saves for its backward)."""
        torch = sys.modules["torch"]
        arrays = [arguments.to_numpy(v) for v in values]
        return [torch.from_numpy(o)
                for o in self.kernel(float64).run(arrays, self._sizes, pack_from)]

    def run_unpacking(self, others, packed, slots, float64):
        """CPU target: ``run_tensors`` with the inputs at ``slots`` (ascending) read from
        ``packed``, a ``run_packing`` result's last tensor; ``others``: the other inputs."""
        torch = sys.modules["torch"]
        arrays = [arguments.to_numpy(v) for v in others]
        results = self.kernel(float64).run_unpacking(arrays, arguments.to_numpy(packed),
                                                     list(slots), self._sizes)
        return [torch.from_numpy(o) for o in results]

    def _run_on_device(self, values, float64, device):
        """The device-resident call: inputs as contiguous tensors on ``device``, outputs
        and workspace allocated there by PyTorch's allocator, an updated output given a
        copy of its input's buffer (docs/cuda.md)."""
        torch = sys.modules["torch"]
        kernel = self.kernel(float64)
        tensors = [torch.as_tensor(v, device=device).contiguous() for v in values]
        types = [arguments.dtype_name(t) for t in tensors]
        shapes = [list(t.shape) for t in tensors]
        out_types, out_shapes, workspace = kernel.device_binding(types, shapes, self._sizes)
        outputs = []
        for out, dtype, shape in zip(self._info.outputs, out_types, out_shapes):
            if out.updates is not None:  # updated in place, in a copy of the input
                tensors[out.updates] = tensors[out.updates].clone()
                outputs.append(tensors[out.updates])
            else:
                outputs.append(torch.empty(shape, dtype=getattr(torch, dtype), device=device))
        scratch = torch.empty(workspace, dtype=torch.uint8, device=device) if workspace else None
        kernel.run_on_device(types, shapes, self._sizes, [t.data_ptr() for t in tensors],
                             [o.data_ptr() for o in outputs],
                             scratch.data_ptr() if scratch is not None else 0)
        return outputs

    def interpret(self, *args, **kwargs):
        """The same call through Tenet's reference interpreter (slow; the test oracle)."""
        values, float64 = arguments.check(self.name, self._info.inputs, args, kwargs)
        self._check_updated(args, kwargs)
        arrays = [arguments.to_numpy(v) for v in values]
        outputs = self._program.interpret(self._variant(float64), arrays, self._sizes)
        outputs = self._update_in_place(values, outputs)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def kernel(self, float64=False):
        """The compiled kernel for a dtype (JIT-compiled, or loaded from the cache)."""
        if float64 not in self._kernels:
            self._kernels[float64] = self._program.compile(self._variant(float64), **self._jit)
        return self._kernels[float64]

    def cpp_path(self, float64=False):
        """The generated C++ the kernel was compiled from."""
        return self.kernel(float64).cpp_path

    def torch_op(self, name=None, differentiable=None):
        """This function as a PyTorch operator with autograd (see tenet.torch_op);
        ``differentiable``: the names of the float outputs that can get gradients (None:
        every float output)."""
        if self._grad is not None:
            raise ValueError(f"'{self.name}' is a gradient function; make the operator from "
                             f"the entry (its autograd runs the derived backward)")
        from .library import registered
        if differentiable is not None:
            return registered(self, name, differentiable)
        if self._torch_op is None or (name is not None and name != self._torch_op.name):
            self._torch_op = registered(self, name)
        return self._torch_op

    def _variant(self, float64):
        return _tenet.Variant(self._entry, float64=float64, grad=self._grad,
                              static_sizes=self._static_sizes)


def _needs_autograd(values):
    torch = sys.modules.get("torch")
    return (torch is not None and torch.is_grad_enabled()
            and any(arguments.is_torch_tensor(v) and v.requires_grad for v in values))


class CompileWarning(UserWarning):
    """A warning or note of the compiler about a program that compiles (an ignored
    reduction hint ``<=>``, an index that takes the smaller range of its uses): the
    text is rendered as the CLI prints it, with line, column and caret."""


def _caller_stacklevel():
    """The stack level, counted from the caller of this function, of the first frame
    outside the tenet package: where a warning points (the user's tenet.compile,
    tenet.torch_op, ...)."""
    package = os.path.dirname(os.path.abspath(__file__))
    level, frame = 1, sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        level, frame = level + 1, frame.f_back
    return level


def _text(value, what, optional=False):
    """A str argument (a path-like one as its str), or a TypeError naming it."""
    if value is None and optional:
        return ""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, got {type(value).__name__} {value!r:.60}")
    return value


def grad_request(wrt, output, vjp=False, half="both"):
    """A _tenet.GradRequest: ``wrt`` one input's name or a list of them (None: every float
    input), ``output`` a name, a list of names (vector-Jacobian products of several
    outputs), or None; ``half`` "both", "forward" or "backward"."""
    if half not in ("both", "forward", "backward"):
        raise ValueError(f"half must be 'both', 'forward' or 'backward', got {half!r:.60}")
    if isinstance(wrt, (str, os.PathLike)):
        wrt = [wrt]
    names = [_text(name, "wrt (input names)") for name in (wrt or [])]
    if output is None or isinstance(output, (str, os.PathLike)):
        return _tenet.GradRequest(wrt=names, output=_text(output, "output", optional=True),
                                  vjp=vjp, half=half)
    if not isinstance(output, collections.abc.Iterable):
        raise TypeError(f"output must be an output's name or a list of them, got "
                        f"{type(output).__name__} {output!r:.60}")
    outputs = [_text(name, "output (output names)") for name in output]
    if not outputs:
        raise ValueError("output: an empty list names no output to differentiate (None "
                         "means every float output)")
    return _tenet.GradRequest(wrt=names, outputs=outputs, vjp=vjp, half=half)


def _request_key(grad):
    """A GradRequest as text for Function.key (the list of outputs only when given, so
    that the keys of other requests stay as they were)."""
    key = f"{grad.wrt}|{grad.output}|{grad.vjp}"
    key += f"|{grad.outputs}" if grad.outputs else ""
    return key + f"|{grad.half}" if grad.half != "both" else key


def _flag(value, what):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} must be True or False, got {type(value).__name__} {value!r:.60}")
    return bool(value)


def load(source, filename="<string>"):
    """Parses and checks a program; raises tenet.CompileError with the diagnostics,
    and issues each warning or note as a tenet.CompileWarning at the user's call."""
    if isinstance(source, bytes):
        source = source.decode("utf-8")
    program = _tenet.CheckedProgram(_text(source, "source (the program's text)"),
                                    _text(filename, "filename"))
    for text in program.warnings:
        warnings.warn(CompileWarning(text), stacklevel=_caller_stacklevel())
    return program


def pick_entry(program, entry):
    """``entry``, or when it is None the compiler's rule, the CLI's too (driver/front_end.h):
    the one def that no other def calls; a ValueError when there is none or several."""
    if entry is not None:
        return _text(entry, "entry (a function's name)")  # unknown: a CompileError
    return program.default_entry()


def compile(source, entry=None, target="cpu", *, sizes=None, static_sizes=None,
            filename="<string>", cache_dir=None, cxx=None, openmp=True, verbose=False,
            index_checks=True):
    """Checks ``source`` and returns its function ``entry`` (by default the one def that no
    other def calls) as
    a callable Function. ``sizes`` fixes size parameters that no input shape determines
    (those only in ``where`` bounds); ``static_sizes`` compiles size parameters in as
    constants (``Function.specialised``). ``cache_dir``/``cxx``/``openmp``/``verbose`` are
    JIT options (defaults: $TENET_CACHE_DIR, $TENET_CXX, OpenMP on, quiet).
    ``index_checks=False`` leaves out the run-time range checks of computed indices
    (data-dependent reads such as ``W(tokens(b, l), d)``): for release code whose
    index data is known to be in range, since an index out of range then reads
    outside its tensor. ``target``: "cpu" (C++ with OpenMP), "cuda" (kernels on an NVIDIA
    GPU; without one, an error saying so) or "cuda-emulated" (the same kernels
    run on the CPU by the grid emulator, docs/cuda.md)."""
    if target not in _TARGETS:
        raise ValueError(f"unknown target {target!r} (targets: "
                         f"{', '.join(repr(t) for t in _TARGETS)})")
    program = load(source, filename)
    jit = {"target": _TARGETS[target], "cache_dir": _text(cache_dir, "cache_dir", optional=True),
           "cxx": _text(cxx, "cxx", optional=True), "openmp": _flag(openmp, "openmp"),
           "verbose": _flag(verbose, "verbose"), "index_checks": _flag(index_checks, "index_checks")}
    function = Function(program, source, pick_entry(program, entry), sizes=checked_sizes(sizes),
                        jit=jit)
    _check_size_names(function, function.sizes, "sizes")
    return function.specialised(static_sizes) if static_sizes else function


def _check_size_names(function, sizes, option):
    """A ValueError naming the first of ``sizes`` that is no size parameter of ``function``."""
    unknown = [name for name in sizes if name not in function.size_params]
    if unknown:
        params = ", ".join(function.size_params) or "none"
        raise ValueError(f"{option}: '{function.name}' has no size parameter '{unknown[0]}' "
                         f"(its size parameters: {params})")


_INT64_MAX = (1 << 63) - 1


def checked_sizes(sizes):
    """``sizes=`` as a dict of name -> int, or a TypeError/ValueError naming the entry."""
    if sizes is None:
        return {}
    if not isinstance(sizes, collections.abc.Mapping):
        raise TypeError(f"sizes: expected a dict of size parameter names to integers, e.g. "
                        f"{{'M': 3}}, got {type(sizes).__name__}")
    checked = {}
    for name, value in sizes.items():
        if not isinstance(name, str):
            raise TypeError(f"sizes: a size parameter's name must be a string, got {name!r}")
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"sizes: '{name}' must be an integer, got {value!r} "
                            f"({type(value).__name__})")
        if not 0 <= int(value) <= _INT64_MAX:
            raise ValueError(f"sizes: '{name}' = {int(value)} is outside [0, 2^63)")
        checked[name] = int(value)
    return checked


def compile_file(path, entry=None, **options):
    """``compile`` on the text of a .tn file (diagnostics name the file)."""
    with open(path, encoding="utf-8") as f:
        return compile(f.read(), entry, filename=str(path), **options)


def print_grad(source, entry=None, wrt=None, output=None, vjp=False, filename="<string>"):
    """The backward Tenet derives for ``entry``, as source in the language (the
    `tenet print --grad` of the CLI): a scalar ``output``'s gradient, or with
    ``vjp`` the vector-Jacobian products of every float output."""
    program = load(source, filename)
    request = grad_request(wrt, output, vjp=vjp)
    variant = _tenet.Variant(pick_entry(program, entry), grad=request)
    return program.unparse(variant)
