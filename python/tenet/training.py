"""``tenet.train``: train a model file on MNIST, as ``tenet train`` does.

The same C++ runs (train/ in the repository): the model's ``# @`` directives,
its ``@defaults``, the training loop, the run directory (``log.csv``,
``last.safetensors``, ``model.tn``) and the options table. Keyword options are
the table's (``tenet.training_options()``); a value out of range raises
``tenet.BindError`` (a ``ValueError``) naming the option and its range, just as
a bad flag or a bad ``@defaults`` value does. See docs/training.md.

    import tenet
    result = tenet.train("models/mlp.tn", out="runs/mlp", epochs=1, limit_train=500)
    print(result.test_accuracy, result.checkpoint)
"""

from dataclasses import dataclass
from typing import Optional

from . import _tenet


@dataclass(frozen=True)
class TrainingOption:
    """One row of the options table. ``default`` is None when the model's
    ``@defaults`` (or the caller) must give the option."""
    name: str
    type: str  # "choice", "bool", "integer" or "number"
    range: str  # "a number in [0, 1]", "adam, sgd or adadelta", ...
    default: Optional[object]
    help: str
    choices: tuple = ()


@dataclass(frozen=True)
class TrainingResult:
    """What a finished run reached: its files, steps and last test evaluation."""
    run_dir: str
    checkpoint: str
    log: str
    steps: int
    epochs: int
    test_loss: float
    test_accuracy: float


def _typed(kind, text):
    if text is None:
        return None
    if kind == "bool":
        return text == "true"
    if kind == "integer":
        return int(text)
    if kind == "number":
        return float(text)
    return text


def training_options():
    """The trainer's options: a list of TrainingOption (name, type, range,
    default, help), the table that ``tenet train``'s flags and the model's
    ``@defaults`` use too."""
    return [TrainingOption(name=row["name"], type=row["type"], range=row["range"],
                           default=_typed(row["type"], row["default"]), help=row["help"],
                           choices=tuple(row["choices"]))
            for row in _tenet.training_options()]


def _as_text(name, value):
    """An option's value as the table reads it: True -> "true", 0.001 -> "0.001"."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return value if isinstance(value, str) else repr(value)
    raise TypeError(f"train(): option {name} must be a bool, int, float or str, "
                    f"not {type(value).__name__}")


def train(model, data=None, out=None, overwrite=False, checkpoint_every=None, log_every=None,
          quiet=False, on_line=None, verbose=False, **options):
    """Trains the model in the file ``model`` (a path) on the MNIST folder ``data``
    ($TENET_DATA_DIR or the bundled sample by default), writing the run to ``out``
    (``runs/<model name>`` by default; a folder holding another run or files a run
    writes is refused unless ``overwrite``). ``options`` are hyper-parameters from
    the table (``lr=0.01, epochs=1, limit_train=500, ...``): each one given wins over
    the model's ``@defaults``, which win over the table's defaults.

    Progress lines go to ``on_line(text)`` when given, else to print() unless
    ``quiet``. ``verbose`` shows the JIT's compiler commands. Returns a
    TrainingResult. Ctrl-C stops the run (KeyboardInterrupt) at the next step;
    the last checkpoint stays."""
    if on_line is None and not quiet:
        on_line = print
    values = {name: _as_text(name, value) for name, value in options.items()}
    result = _tenet.train(str(model), None if data is None else str(data),
                          None if out is None else str(out), bool(overwrite), values,
                          checkpoint_every, log_every, bool(verbose), on_line)
    return TrainingResult(**result)


def emit_standalone(model, out, overwrite=False):
    """Writes into the folder ``out`` a C++ project that trains and runs the model
    in the file ``model`` with no Python, libtorch or Tenet (``tenet emit --train``;
    docs/standalone.md): a C API ``<name>_train.h`` and ``train`` and ``predict``
    programs, built with CMake. Files already in ``out`` are refused (BindError)
    unless ``overwrite``. Returns the model's name, the prefix of the C API."""
    return _tenet.emit_standalone(str(model), str(out), bool(overwrite))
