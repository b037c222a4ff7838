"""``Program.emit``: the standalone training and inference project of an imported MNIST
classifier, as ``tenet emit MODEL.tn --train`` writes it for a model file
(docs/standalone.md), with the module's weights.

The project's trainer needs a model file with directives (docs/training.md, "Models"):
a training function taking the parameters, the images, the labels and the dropout
masks and returning a loss and the class scores, and an evaluation function taking
the images and the parameters and returning the scores. ``standalone_source`` writes
that file: the imported program as it is, then two small functions that call it (the
images reshaped to the module's input where needed; the loss the mean cross-entropy
of the scores, or their negative log-likelihood when they already are
log-probabilities), with ``@param`` lines giving PyTorch's default initialisers
(initialisers.py). ``emit`` writes the project (``_tenet.emit_standalone`` on that
file), the file itself and ``weights.safetensors`` (the module's current parameters
under the file's names, which ``<model>_load``, ``train --load`` and ``predict
--weights`` read).

What the project cannot serve is refused before anything is written, with a
``TorchImportError`` naming the reason: buffers (BatchNorm's running statistics),
tensors the forward makes, a forward that does not take one float image batch
``[B, 1, 28, 28]`` (or ``[B, 28, 28]``, ``[B, 784]``) or does not return float32
scores ``[B, 10]``, a fixed batch size.
"""

import os
import re
import tempfile
import textwrap
import warnings
from dataclasses import dataclass

from .. import _tenet
from .errors import TorchImportError
from .initialisers import default_initialisers
from .names import Namer, comment_text

LOSSES = ("cross_entropy", "nll")
# The project's train program needs an optimiser, a learning rate, a batch size and a
# number of epochs (its flags override them): torch.optim.Adam's default rate.
DEFAULT_OPTIONS = {"optimizer": "adam", "lr": 0.001, "batch": 64, "epochs": 1}
WEIGHTS_FILE = "weights.safetensors"
IMAGE_SHAPES = (("B", "1", "28", "28"), ("B", "28", "28"), ("B", "784"))
CLASSES = 10


@dataclass(frozen=True)
class StandaloneProject:
    """What ``Program.emit`` wrote: the folder, the model's name (the prefix of the C
    API: ``<name>_create``, ``<name>_forward``, ...), the model file, the weights file
    and the C API's header."""
    directory: str
    name: str
    model: str
    weights: str
    header: str


def emit(program, directory, *, name=None, loss="cross_entropy", options=None,
         initialisers=None, overwrite=False):
    """Program.emit (its docstring says what each argument means)."""
    name = _model_name(program, name)
    source = standalone_source(program, name, loss=loss, options=options,
                               initialisers=initialisers)
    weights = _weights(program)
    files = _project_files(source, name)
    files[WEIGHTS_FILE] = None  # written below, from `weights`
    directory = os.fspath(directory)
    if not overwrite:
        _refuse_existing(directory, files)
    os.makedirs(directory, exist_ok=True)
    for relative, data in files.items():
        if data is not None:
            _write_if_changed(os.path.join(directory, relative), data)
    _save_weights(weights, os.path.join(directory, WEIGHTS_FILE))
    return StandaloneProject(directory=directory, name=name,
                             model=os.path.join(directory, f"{name}.tn"),
                             weights=os.path.join(directory, WEIGHTS_FILE),
                             header=os.path.join(directory, f"{name}_train.h"))


# -- what the project can serve ------------------------------------------------------------

class _Layout:
    """The checked facts about one mode's function: its entry, its parameters
    ([(state_dict key, tenet name, type, shape)]), its image input's shape, its dropout
    masks ([(name, shape, p)]) and the inputs in call order."""

    def __init__(self, program, training):
        self.entry = program.entry(training)
        signature = program.signature(training)
        function = program.function(training)
        declared = {d.name: d for d in function.inputs}
        mode = "training" if training else "evaluation"
        self._refuse_state(signature, mode, program.manifest.get("modules", {}))
        users = [i for i in signature["inputs"] if i["kind"] == "user"]
        if len(users) != 1:
            _refuse(f"the forward takes {len(users)} tensor arguments; the project calls it "
                    f"with one, a batch of images [B, 1, 28, 28]")
        image = declared[users[0]["name"]]
        self.image_shape = tuple(image.shape)
        _check_image(image)
        user_outputs = [o for o in signature["outputs"] if o["kind"] == "user"]
        if len(user_outputs) != 1:
            _refuse(f"the forward returns {len(user_outputs)} tensors; the project needs one, "
                    f"the class scores [B, {CLASSES}]")
        scores = next(o for o in function.outputs if o.name == user_outputs[0]["name"])
        if scores.type != "float32" or tuple(scores.shape) != ("B", str(CLASSES)):
            _refuse(f"the forward returns {_describe(scores)}, not float32 [B, {CLASSES}] "
                    f"class scores (the digit's is the largest)")
        self.inputs = signature["inputs"]
        self.parameters = [(i["key"], i["name"], declared[i["name"]].type,
                            tuple(declared[i["name"]].shape))
                           for i in self.inputs if i["kind"] == "parameter"]
        self.masks = []
        for i in self.inputs:
            if i["kind"] == "bernoulli":
                _refuse(f"the {mode} forward draws Bernoulli values ('{i['name']}': "
                        f"stochastic depth, or dropout written as bernoulli_), which the "
                        f"project's trainer does not draw; only dropout masks")
            if i["kind"] == "dropout":
                shape = tuple(declared[i["name"]].shape)
                if not shape or shape[0] != "B":
                    _refuse(f"the dropout mask '{i['name']}' is {list(shape)}: the project "
                            f"draws masks per example, batch first, in the {mode} forward")
                self.masks.append((i["name"], shape, i["p"]))

    @staticmethod
    def _refuse_state(signature, mode, classes):
        buffers = [i["key"] for i in signature["inputs"] if i["kind"] == "buffer"]
        if buffers:
            path = buffers[0].rpartition(".")[0]
            _refuse(f"the {mode} forward reads the buffers {', '.join(buffers)}; the "
                    f"project holds parameters only, so it cannot keep or update buffers "
                    f"(BatchNorm's running statistics: a norm without buffers, such as "
                    f"GroupNorm or LayerNorm, can be emitted)", module_path=path,
                    module_type=classes.get(path, ""))
        changed = [o["key"] for o in signature["outputs"] if o["kind"] == "buffer"]
        if changed and not buffers:
            _refuse(f"the {mode} forward changes the parameters {', '.join(changed)} (an "
                    f"embedding's max_norm); the project's trainer changes parameters "
                    f"only by its optimiser", module_path=changed[0].rpartition(".")[0],
                    module_type=classes.get(changed[0].rpartition(".")[0], ""))
        constants = [i["name"] for i in signature["inputs"] if i["kind"] == "constant"]
        if constants:
            _refuse(f"the {mode} forward makes tensors ({', '.join(constants)}: "
                    f"torch.tensor(...) or the like, which export lifts to constants); the "
                    f"project holds parameters only: use Python numbers, or parameters")
        for spec in signature["inputs"]:
            if spec["kind"] == "parameter" and any(not d.isdigit() for d in spec["shape"]):
                _refuse(f"the parameter '{spec['key']}' has the shape {spec['shape']}, "
                        f"which depends on the batch size")


def _check_image(image):
    shape = tuple(image.shape)
    if shape and shape[0].isdigit() and ("B",) + shape[1:] in IMAGE_SHAPES:
        _refuse(f"the program's batch size is fixed at {shape[0]}; the project needs it to "
                f"vary: import with dynamic_batch=True and an example batch of at least 2")
    if not image.type.startswith("float") or shape not in IMAGE_SHAPES:
        _refuse(f"the forward takes {_describe(image)}; the project feeds it float32 MNIST "
                f"images [B, 1, 28, 28] in [0, 1] (or, reshaped, [B, 28, 28] or [B, 784])")


def _describe(decl):
    return f"{decl.type} [{', '.join(decl.shape)}]"


def _refuse(what, module_path="", module_type=""):
    raise TorchImportError(f"cannot emit a standalone project: {what}",
                           module_path=module_path, module_type=module_type)


def _layouts(program):
    train, evaluate = _Layout(program, True), _Layout(program, False)
    tied = program.manifest.get("tied", {})
    if tied:
        key, first = next(iter(tied.items()))
        _refuse(f"'{key}' is the same tensor as '{first}' (tied parameters); the project's "
                f"trainer holds each parameter input apart, so it would train them as two")
    extra = {p[0] for p in evaluate.parameters} - {p[0] for p in train.parameters}
    if extra:
        _refuse(f"the evaluation forward reads parameters the training one does not "
                f"({', '.join(sorted(extra))})")
    return train, evaluate


# -- the model file ------------------------------------------------------------------------

def standalone_source(program, name, *, loss="cross_entropy", options=None, initialisers=None):
    """The model file of the project: directives, the imported program, and the
    training and evaluation entries that call it."""
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {', '.join(LOSSES)} (cross_entropy: the "
                         f"module returns logits; nll: it returns log-probabilities), "
                         f"not {loss!r}")
    train, evaluate = _layouts(program)
    taken = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", program.source))
    namer = Namer(reserved=taken)
    train_fn, eval_fn = namer(f"{name}_loss"), namer(f"{name}_scores")
    # the wrappers' own tensors: free of the parameters' and masks' names
    local = Namer(reserved=[p[1] for p in train.parameters] + [m[0] for m in train.masks]
                  + [train_fn, eval_fn, train.entry, evaluate.entry])
    names = {role: local(role) for role in ("image", "label", "scores", "loss", "flat",
                                              "ce_max", "ce_sum", "picked")}
    parameters = [(key, tenet, shape) for key, tenet, _, shape in train.parameters]
    lines = _header(program, name, train_fn, eval_fn, loss, names, train, parameters,
                    options, initialisers)
    lines.append(program.source.rstrip("\n"))
    lines += ["", _wrapper(train_fn, train, names, parameters, loss, training=True), "",
              _wrapper(eval_fn, evaluate, names, parameters, loss, training=False)]
    return "\n".join(lines)


def _header(program, name, train_fn, eval_fn, loss, names, train, parameters, options,
            initialisers):
    loss_text = ("the mean cross-entropy of the scores (F.cross_entropy)"
                 if loss == "cross_entropy" else
                 "the mean negative log-likelihood of the scores, which are "
                 "log-probabilities (F.nll_loss)")
    text = (f"{name}: the model of a standalone training and inference project, written by "
            f"tenet's Program.emit (docs/import.md). The functions below the directives are "
            f"the module as tenet.from_torch imported it; the last two are the project's "
            f"entries: {train_fn} takes the images, the labels and the dropout masks and "
            f"returns the scores and {loss_text}; {eval_fn} returns the scores. "
            f"{WEIGHTS_FILE} holds the module's parameters when it was emitted (train --load "
            f"FILE, predict --weights FILE); the @param initialisers are PyTorch's defaults, "
            f"for a fresh start (create, train).")
    lines = textwrap.wrap(text, 86, initial_indent="# ", subsequent_indent="# ")
    lines += ["#",
             f"# @train {train_fn} loss={names['loss']} scores={names['scores']}",
             f"# @eval {eval_fn} scores={names['scores']}",
             f"# @data image={names['image']} label={names['label']}"]
    lines += [f"# @dropout {mask} p={_number(p)}" for mask, _, p in train.masks]
    lines += _param_lines(program, parameters, initialisers or {})
    lines.append("# @defaults " + " ".join(f"{k}={v}" for k, v in _options(options).items()))
    return lines + [""]


def _param_lines(program, parameters, chosen):
    if not isinstance(chosen, dict):
        raise TypeError(f"initialisers must be a dict {{parameter: initialiser text}}, not "
                        f"{type(chosen).__name__}")
    for key, text in chosen.items():
        _check_directive_text(f"initialisers[{key!r}]", text, "an initialiser such as "
                              "'zeros' or 'normal(0, 0.01)' (docs/training.md)")
    known = {key for key, _, _ in parameters} | {tenet for _, tenet, _ in parameters}
    unknown = sorted(set(chosen) - known)
    if unknown:
        raise ValueError(f"initialisers: {', '.join(unknown)} is not a parameter of the "
                         f"program (its parameters: {', '.join(k for k, _, _ in parameters)})")
    classes = program.manifest.get("modules", {})
    rules, guessed = default_initialisers([(k, [int(d) for d in s]) for k, _, s in parameters],
                                          classes)
    tenet_names = {key: tenet for key, tenet, _ in parameters}
    guessed = [k for k in guessed if k not in chosen and tenet_names[k] not in chosen]
    if guessed:
        warnings.warn(f"Program.emit: PyTorch has no default initialiser for "
                      f"{', '.join(guessed)} (a module it does not know, or a plain "
                      f"Parameter); the project's create() initialises "
                      f"{'it' if len(guessed) == 1 else 'them'} by shape, as nn.Linear "
                      f"would (zeros if not a weight or its bias): pass initialisers="
                      f"{{key: text}} to choose", stacklevel=6)
    lines = []
    for key, tenet, _ in parameters:
        text = chosen.get(key, chosen.get(tenet, rules[key]))
        origin = classes.get(key.rpartition(".")[0])
        note = f"{key} ({origin})" if origin else key  # user text: escaped below
        lines.append(f"# @param {tenet} {text}  # {comment_text(note)}")
    return lines


def _options(options):
    from ..training import _as_text, training_options
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"options must be a dict {{option: value}} (such as {{'lr': 0.01}}), "
                        f"not {type(options).__name__}")
    merged = dict(DEFAULT_OPTIONS)
    merged.update(options or {})
    known = [o.name for o in training_options()]
    for key in merged:
        if key not in known:
            raise ValueError(f"options: unknown training option {key!r} (the options: "
                             f"{', '.join(known)})")
    texts = {key: _as_text(key, value) for key, value in merged.items()}
    for key, text in texts.items():
        # one word of the @defaults line: a space or '=' would start another option
        if not re.fullmatch(r"[A-Za-z0-9_.+\-]+", text):
            raise ValueError(f"options[{key!r}]: {text!r} is not a value the @defaults line "
                             f"can hold (letters, digits, '_', '.', '+', '-')")
    return texts


def _check_directive_text(what, text, expected):
    """User text for a directive line (``# @param NAME TEXT``): one line of printable
    ASCII without '#', else refused (it would end the directive or start another)."""
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a str ({expected}), not {type(text).__name__}")
    if not re.fullmatch(r"[ -\"$-~]+", text) or not text.strip():
        raise ValueError(f"{what} is {text!r}: expected {expected}, on one line of printable "
                         f"ASCII without '#'")


def _wrapper(function, layout, names, parameters, loss, training):
    image, scores = names["image"], names["scores"]
    decls = [f"float({', '.join(IMAGE_SHAPES[0])}) {image}"]
    if training:
        decls.append(f"int32(B) {names['label']}")
        decls += [f"float({', '.join(shape)}) {mask}" for mask, shape, _ in layout.masks]
    decls += [f"float({', '.join(shape)}) {tenet}" if shape else f"float {tenet}"
              for _, tenet, shape in parameters]
    outputs = f"{scores}, {names['loss']}" if training else scores
    what = "training" if training else "evaluation"
    body = []
    fed = image
    if layout.image_shape != IMAGE_SHAPES[0]:
        fed = names["flat"]
        body.append(f"  {fed} = reshape({image}, {', '.join(layout.image_shape)})")
    by_key = {key: tenet for key, tenet, _ in parameters}
    args = []
    for spec in layout.inputs:
        kind = spec["kind"]
        args.append(by_key[spec["key"]] if kind == "parameter" else
                    fed if kind == "user" else spec["name"])
    call = textwrap.wrap(f"{scores} = {layout.entry}({', '.join(args)})", 88,
                         initial_indent="  ", subsequent_indent="      ",
                         break_long_words=False, break_on_hyphens=False)
    body += call
    if training:
        body += _loss_lines(names, loss)
    comment = (f"# The project's {what} entry: the {what}-mode forward"
               + (" and the loss." if training else "."))
    signature = f"def {function}(\n    " + ",\n    ".join(decls) + f")\n    -> ({outputs})"
    return "\n".join([comment, signature + " {"] + body + ["}"])


def _loss_lines(names, loss):
    s, label, out = names["scores"], names["label"], names["loss"]
    picked = names["picked"]
    lines = [f"  {picked}(b) +=! select({label}(b) == k, {s}(b, k), 0)"]
    if loss == "nll":
        return ["  # F.nll_loss(scores, label): -scores(b, label(b)), the mean over the batch"] \
            + lines + [f"  {out} +=! -{picked}(b) / float32(B)"]
    top, total = names["ce_max"], names["ce_sum"]
    return ["  # F.cross_entropy(scores, label): logsumexp(scores(b, :)) - scores(b, label(b)),",
            "  # the mean over the batch",
            f"  {top}(b) max=! {s}(b, k)",
            f"  {total}(b) +=! exp({s}(b, k) - {top}(b))"] + lines + \
        [f"  {out} +=! ({top}(b) + log({total}(b)) - {picked}(b)) / float32(B)"]


def _number(value):
    return f"{value:.9g}"


# -- files ---------------------------------------------------------------------------------

def _model_name(program, name):
    if name is None:
        train, evaluate = program.entry(True), program.entry(False)
        name = train if train == evaluate else re.sub(r"_eval$", "", evaluate)
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
        raise ValueError(f"name must be an identifier (letters, digits, '_'; the prefix of "
                         f"the C API), not {name!r}")
    return name


def _project_files(source, name):
    """{relative path: bytes} of the project for the model file ``source``: emitted in a
    temporary folder (nothing is written where the caller asked if the model cannot be
    emitted), the model file's temporary path replaced by its name in the project, so
    that the same program gives the same files wherever it is emitted (and an
    incremental build of a re-emitted project compiles nothing)."""
    with tempfile.TemporaryDirectory(prefix="tenet-emit-") as tmp:
        model = os.path.join(tmp, f"{name}.tn")
        with open(model, "w") as out:
            out.write(source)
        project = os.path.join(tmp, "project")
        try:
            _tenet.emit_standalone(model, project, False)
        except (_tenet.CompileError, _tenet.BindError) as error:
            text = str(error).replace(model, f"{name}.tn (generated by Program.emit)")
            raise type(error)(text) from error
        files = {f"{name}.tn": source.encode()}
        for root, _, names in os.walk(project):
            for file_name in sorted(names):
                path = os.path.join(root, file_name)
                with open(path, "rb") as f:
                    data = f.read().replace(model.encode(), f"{name}.tn".encode())
                files[os.path.relpath(path, project).replace(os.sep, "/")] = data
    return files


def _refuse_existing(directory, files):
    existing = [f for f in files if os.path.lexists(os.path.join(directory, f))]
    if existing:
        named = ", ".join(existing[:8])
        if len(existing) > 8:
            named += f" and {len(existing) - 8} more files"
        raise _tenet.BindError(f"'{directory}' already holds {named}, which emit would "
                               f"overwrite: choose another folder, or pass overwrite=True")


def _write_if_changed(path, data):
    """Writes ``data`` unless the file holds it already (its time stamp then stays, so
    that make and ninja rebuild only what changed)."""
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return
    except OSError:
        pass
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def _weights(program):
    """{tenet name: float32 numpy array} of the module's current parameters."""
    current = program._current_weights()
    names = [(i["key"], i["name"]) for i in program.signature(True)["inputs"]
             if i["kind"] == "parameter"]
    return {tenet: current[key].detach().to("cpu").float().contiguous().numpy()
            for key, tenet in names}


def _save_weights(arrays, path):
    """safetensors, as ``<model>_save`` writes it (metadata format=pt), replaced
    atomically."""
    from safetensors.numpy import save_file
    partial = f"{path}.partial"
    save_file(arrays, partial, metadata={"format": "pt"})
    os.replace(partial, path)
