"""Tenet from Python: compile tensor programs written in Tenet's index notation,
run them on numpy arrays or torch tensors, and use them as PyTorch operators whose
backward Tenet derives.

    import tenet
    f = tenet.compile(SOURCE, "softmax")      # checks now; compiles on first call
    p = f(z)                                   # numpy or torch in, the same kind out
    op = tenet.torch_op(SOURCE, "lltm")        # torch.ops.tenet.lltm_<hash>, with autograd
    print(tenet.print_grad(SOURCE, "squash", vjp=True))
    assert tenet.gradcheck(SOURCE, "squash", sizes={"B": 2, "N": 3, "D": 4}, vjp=True)
    run = tenet.train("models/mlp.tn", out="runs/mlp", epochs=1)  # as `tenet train`
    tenet.emit_standalone("models/mnist_cnn.tn", "out/cnn")     # as `tenet emit --train`

Errors in the source raise tenet.CompileError (the diagnostic with line, column and
caret), warnings and notes about a program that compiles are issued as
tenet.CompileWarning (warnings.warn); inputs of the wrong shape raise tenet.BindError (a ValueError) or, from the
argument checks, TypeError/ValueError naming the argument. See docs/python.md.
"""

import os

_RUNTIME = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runtime")
# Generated code includes the runtime headers shipped with the package.
if os.path.isdir(_RUNTIME) and not os.environ.get("TENET_RUNTIME_DIR"):
    os.environ["TENET_RUNTIME_DIR"] = _RUNTIME



def _settle_openmp_waiting():
    """As the tenet CLI does (runtime/tenet_parallel.h, settle_openmp_waiting):
    idle OpenMP threads spin 3,000 rounds, not libgomp's 300,000, so that a
    machine another job shares does not slow both down severalfold. libgomp
    reads the setting when it is loaded (with the extension below), so only
    where it is not loaded yet and the user set neither variable."""
    if "GOMP_SPINCOUNT" in os.environ or "OMP_WAIT_POLICY" in os.environ:
        return
    try:
        with open("/proc/self/maps") as maps:
            if any("/libgomp.so" in line for line in maps):
                return
    except OSError:
        return  # not Linux: OpenMP keeps its defaults
    os.environ["GOMP_SPINCOUNT"] = "3000"


_settle_openmp_waiting()

from ._tenet import BindError, CompileError, InternalError  # noqa: E402
from .function import CompileWarning, Function, compile, compile_file, print_grad  # noqa: E402
from .gradcheck import gradcheck  # noqa: E402
from .torch_extension import emit_torch_extension, torch_extension  # noqa: E402
from .training import (TrainingOption, TrainingResult, emit_standalone, train,  # noqa: E402
                       training_options)


def from_torch(module, example_args, **options):
    """A PyTorch module translated into a Tenet Program (tenet.importer, docs/import.md);
    imports torch on first use."""
    from .importer import from_torch as translate
    return translate(module, example_args, **options)


def load(directory):
    """The Program that ``Program.save(directory)`` wrote (model.tn, weights.safetensors)."""
    from .importer import load as read
    return read(directory)


def __getattr__(name):
    if name == "TorchImportError":  # without importing torch before it is needed
        from .importer.errors import TorchImportError
        return TorchImportError
    raise AttributeError(f"module 'tenet' has no attribute {name!r}")


def torch_op(source, entry=None, **options):
    """``source``'s function ``entry`` as a PyTorch operator with autograd
    (see tenet.library); imports torch on first use."""
    from .library import torch_op as make
    return make(source, entry, **options)


__all__ = ["BindError", "CompileError", "CompileWarning", "Function", "InternalError",
           "TorchImportError", "TrainingOption", "TrainingResult", "compile", "compile_file",
           "emit_standalone", "emit_torch_extension", "from_torch", "gradcheck", "load",
           "print_grad", "torch_extension", "torch_op", "train", "training_options"]
