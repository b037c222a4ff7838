"""The imported program: its Tenet source, the weights it was imported with, and what
each input and output of its functions means to PyTorch (the manifest)."""

from .. import function as tenet_function


class Program:
    """A PyTorch module translated to Tenet (``tenet.from_torch``).

    ``source`` is the program text; ``entry(training)`` the function for a mode;
    ``module()`` a torch.nn.Module that runs it (sharing the original module's parameters
    and buffers); ``save(dir)`` writes ``model.tn`` and ``weights.safetensors``
    (``tenet.load(dir)`` reads them back); ``emit(dir)`` the standalone C++ project that
    trains and serves an MNIST classifier without Python.
    """

    def __init__(self, source, manifest, weights, original=None):
        self.source = source
        self.manifest = manifest        # {"entries": {"train": f, "eval": g}, "functions": {...}}
        self.weights = weights          # state_dict key -> torch tensor
        self._original = original
        self._ops = {}

    def __repr__(self):
        entries = self.manifest["entries"]
        return f"<tenet.Program {entries['train']!r} / {entries['eval']!r}>"

    def entry(self, training):
        return self.manifest["entries"]["train" if training else "eval"]

    def signature(self, training):
        """{"inputs": [{name, kind, key, p}], "outputs": [{name, kind, key}]} of a mode's
        function: kind 'user' (key: the argument or result position), 'parameter' and
        'buffer' (key: the state_dict key), 'constant', 'dropout' (p: its probability)."""
        return self.manifest["functions"][self.entry(training)]

    def function(self, training, target="cpu", static_sizes=None):
        """The mode's function, compiled for ``target`` (tenet.Function); with
        ``static_sizes`` ({"B": 2}), specialised to them (Function.specialised)."""
        options = {} if target == "cpu" else {"target": target}  # the CPU's key as before
        return tenet_function.compile(self.source, self.entry(training), filename="model.tn",
                                      static_sizes=static_sizes, **options)

    def torch_op(self, training, target="cpu", static_sizes=None):
        """The mode's function as a PyTorch operator with Tenet's derived backward, its
        kernels compiled for ``target`` ("cpu"; "cuda" for CUDA tensors), and with
        ``static_sizes`` for those sizes only."""
        key = (self.entry(training), target, tuple(sorted((static_sizes or {}).items())))
        if key not in self._ops:
            # the buffers it updates (BatchNorm's running statistics) get no gradient
            user = [spec["name"] for spec in self.signature(training)["outputs"]
                    if spec["kind"] != "buffer"]
            function = self.function(training, target, static_sizes)
            self._ops[key] = function.torch_op(differentiable=user)
        return self._ops[key]

    def module(self, target=None, specialise=True):
        """A torch.nn.Module running this program (see tenet.importer.module). For a
        program from from_torch it shares the original module's parameters and buffers;
        for a loaded one it owns them (the first module made is the one ``save`` reads).
        It runs where its tensors are: compiled for the CPU, or for "cuda" once moved to
        a GPU (``.cuda()``); ``target`` fixes the target instead ("cuda-emulated": the
        CUDA kernels on the CPU's tensors, docs/cuda.md). With ``specialise`` (the
        default), the sizes of its first call in each mode (the batch size) are compiled
        in as constants (Function.specialised: the compiler's cost rules and loops see
        them); calls with other sizes run the general build, compiled when first needed."""
        from .module import TenetModule
        made = TenetModule(self, self._original, target, specialise)
        if self._original is None:
            self._original = made
        return made

    def save(self, directory):
        """Writes ``model.tn`` and ``weights.safetensors`` (the parameters and buffers,
        with the manifest and the program's text in its metadata) into ``directory``, as
        a pair: whenever a save fails or the process dies, ``tenet.load(directory)``
        reads the previous save or the new one (saved.py; docs/security.md). A
        ``model.tn`` or ``weights.safetensors`` there that is not a regular file (a
        link, a FIFO, a device) is refused."""
        from .saved import save
        save(self, directory)

    def emit(self, directory, *, name=None, loss="cross_entropy", options=None,
             initialisers=None, overwrite=False):
        """Writes into ``directory`` the standalone C++ project that trains and serves
        this MNIST classifier without Python, libtorch or Tenet (as ``tenet emit
        --train``; docs/standalone.md, docs/import.md): ``<name>.tn`` (the program, the
        trainer's directives and the two entries that wrap it), ``weights.safetensors``
        (the module's current parameters), the generated code, the C API
        ``<name>_train.h`` and the ``train`` and ``predict`` programs, built with CMake.

        ``name``: the model's name, the prefix of the C API (default: the module's class
        in snake case). ``loss``: "cross_entropy" (the module returns logits; the
        default, also right for log-probabilities) or "nll" (it returns
        log-probabilities). ``options``: the train program's defaults ({"lr": 0.01,
        "batch": 32, ...}; the trainer's options table, tenet.training_options()),
        over Adam at lr 0.001, batch 64, 1 epoch. ``initialisers``: {parameter (state_dict
        key or Tenet name): initialiser text} instead of PyTorch's defaults. Files
        already in ``directory`` are refused (BindError) unless ``overwrite``; files
        whose content is unchanged are not rewritten.

        The forward must take one float image batch [B, 1, 28, 28] in [0, 1] (or
        [B, 28, 28] or [B, 784]: the images are reshaped) and return float32 scores
        [B, 10], with the batch size free, and read no buffers nor tensor constants:
        anything else is a TorchImportError saying why, and nothing is written.
        Returns a StandaloneProject (directory, name, model, weights, header)."""
        from .standalone import emit
        return emit(self, directory, name=name, loss=loss, options=options,
                    initialisers=initialisers, overwrite=overwrite)

    def _current_weights(self):
        """The weights, with the module's current parameters and buffers."""
        weights = dict(self.weights)
        if self._original is not None:  # every key, tied ones too
            weights.update(self._original.named_parameters(remove_duplicate=False))
            weights.update(self._original.named_buffers(remove_duplicate=False))
        return weights


def load(directory):
    """The Program that ``Program.save(directory)`` wrote, its manifest validated and its
    declarations matched to the weights by name, dtype and shape (saved.py)."""
    from .saved import load as load_saved
    return load_saved(directory)
