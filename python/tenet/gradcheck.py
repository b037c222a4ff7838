"""``tenet.gradcheck``: are Tenet's derived gradients right?

Two checks, as ``tenet gradcheck`` on the command line does them:

1. finite differences: the gradient program in Tenet's float64 interpreter
   against central differences of the original function (ad/gradcheck.h;
   kinks and ties are reported as warnings and judged by one-sided
   differences);
2. compiled code: the JIT-compiled float32 gradient program against the
   float32 interpreter on the same inputs, every output and gradient within
   ``compiled_tolerance`` of its largest magnitude.
"""

import numpy as np

from . import _tenet
from . import sizes as symbolic
from .arguments import is_torch_tensor, to_numpy
from .function import _signature, checked_sizes, grad_request, load, pick_entry

# max |compiled - interpreted| / max |interpreted|: float32 sums in another
# order (GEMM, OpenMP-free reductions) stay far below this.
COMPILED_TOLERANCE = 1e-4
_MAGNITUDE_FLOOR = 1e-6


def _non_finite(array):
    """The first entry of ``array`` that is NaN or infinite, as "nan at [1, 2]", or ""."""
    bad = np.flatnonzero(~np.isfinite(array))
    if not bad.size:
        return ""
    index = [int(i) for i in np.unravel_index(bad[0], array.shape)]
    return f"{array.flat[bad[0]]} at {index}"


class CompiledCheck:
    """One output of the compiled gradient program against the interpreter. A NaN or
    infinity in either fails (``problem`` says where): agreeing on them says nothing of
    the gradient, and an infinite magnitude would make every relative error 0."""

    def __init__(self, name, compiled, interpreted, tolerance):
        self.name = name
        self.problem = ""
        if compiled.shape != interpreted.shape:
            self.problem = f"shape {list(compiled.shape)} compiled, " \
                           f"{list(interpreted.shape)} interpreted"
        elif _non_finite(compiled):
            self.problem = f"the compiled program gives {_non_finite(compiled)}"
        elif _non_finite(interpreted):
            self.problem = f"the interpreter gives {_non_finite(interpreted)}"
        if self.problem:
            self.max_abs = self.rel = float("inf")
        else:
            self.max_abs = float(np.max(np.abs(compiled.astype(np.float64) - interpreted))) \
                if interpreted.size else 0.0
            magnitude = float(np.max(np.abs(interpreted))) if interpreted.size else 0.0
            self.rel = self.max_abs / max(magnitude, _MAGNITUDE_FLOOR)
        self.passed = bool(not self.problem and self.rel <= tolerance)


class GradcheckResult:
    """``passed``; ``finite_differences`` (per input: ``input``, ``checked``, ``kinks``,
    ``max_abs``, ``max_rel``, ``problem``, ``passed``); ``warnings``; ``errors`` (a loss
    or a value that is not finite: such a check never passes); ``compiled`` (per output
    of the gradient program: ``name``, ``max_abs``, ``rel``, ``problem``, ``passed``).
    ``str()`` is the two tables and the errors."""

    def __init__(self, entry, report, compiled):
        self.entry = entry
        self.finite_differences = list(report.inputs)
        self.warnings = list(report.warnings)
        self.compiled = compiled
        self.errors = list(report.errors) + [f"{c.name}: {c.problem}" for c in compiled
                                             if c.problem]
        self.passed = bool(report.passed and all(c.passed for c in compiled))
        self._table = report.table()

    def __bool__(self):
        return self.passed

    def __str__(self):
        lines = [f"gradcheck {self.entry}: interpreter (float64) against central differences",
                 self._table.rstrip("\n")]
        if self.compiled:
            lines.append("compiled (C++, float32) against the interpreter (float32)")
            lines.append(f"{'output/gradient':<16} {'max abs err':>12} {'rel to max':>12}  pass")
            for c in self.compiled:
                lines.append(f"{c.name:<16} {c.max_abs:>12.3g} {c.rel:>12.3g}  "
                             f"{'yes' if c.passed else 'NO'}")
            lines += [f"error: {c.name}: {c.problem}" for c in self.compiled if c.problem]
        lines.append(f"gradcheck {self.entry}: {'ok' if self.passed else 'FAILED'}")
        return "\n".join(lines)


def gradcheck(source, entry=None, *, sizes=None, inputs=None, wrt=None, output=None,
              vjp=False, seed=1, step=1e-6, tolerance=1e-4, max_entries=0, compiled=True,
              filename="<string>", **jit):
    """Checks the gradients of ``entry`` on ``inputs`` (numpy arrays, one per input) or
    on random ones drawn for ``sizes`` (uniform in [-1, 1), from ``seed``).

    ``wrt``/``output``/``vjp`` choose the gradient as in ``Function.grad``/``vjp``
    (random cotangents in VJP mode). ``compiled``: also run check 2. Returns a
    GradcheckResult (truthy when everything passed); errors in the source or the
    request raise tenet.CompileError, bad inputs tenet.BindError."""
    program = load(source, filename)
    entry = pick_entry(program, entry)
    sizes = checked_sizes(sizes)
    request = grad_request(wrt, output, vjp)
    arrays = [to_numpy(a if is_torch_tensor(a) else np.asarray(a)) for a in (inputs or [])]
    declared = _signature(program.info(_tenet.Variant(entry))).inputs  # shapes as Sizes
    if arrays:
        sizes = symbolic.bind(declared, [a.shape for a in arrays], sizes)
    unbound = sorted({s for d in declared for dim in d.shape for s in symbolic.symbols(dim)}
                     - sizes.keys())
    if unbound:
        raise ValueError(f"gradcheck: size parameter '{unbound[0]}' is not bound: pass "
                         f"sizes={{'{unbound[0]}': ...}} or inputs")
    report = program.gradcheck(entry, request, sizes, arrays, seed, step, tolerance,
                               max_entries)
    checks = []
    if compiled:
        variant = _tenet.Variant(entry, grad=request)
        grad_inputs = program.random_inputs(variant, sizes, seed)
        if arrays:  # the given inputs, then random cotangents
            grad_inputs = [a.astype(g.dtype) for a, g in zip(arrays, grad_inputs)] + \
                grad_inputs[len(arrays):]
        got = program.compile(variant, **jit).run(grad_inputs, sizes)
        want = program.interpret(variant, grad_inputs, sizes)
        names = [o.name for o in program.info(variant).outputs]
        checks = [CompiledCheck(n, g, w, COMPILED_TOLERANCE) for n, g, w in zip(names, got, want)]
    return GradcheckResult(entry, report, checks)
