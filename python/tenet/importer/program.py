"""The imported program: its Tenet source, the weights it was imported with, and what
each input and output of its functions means to PyTorch (the manifest)."""

import json
import os

from .. import function as tenet_function

MANIFEST_KEY = "tenet.import"


class Program:
    """A PyTorch module translated to Tenet (``tenet.from_torch``).

    ``source`` is the program text; ``entry(training)`` the function for a mode;
    ``module()`` a torch.nn.Module that runs it (sharing the original module's parameters
    and buffers); ``save(dir)`` writes ``model.tn`` and ``weights.safetensors``
    (``tenet.load(dir)`` reads them back).
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

    def function(self, training):
        """The mode's function, compiled (tenet.Function)."""
        return tenet_function.compile(self.source, self.entry(training), filename="model.tn")

    def torch_op(self, training):
        """The mode's function as a PyTorch operator with Tenet's derived backward."""
        key = self.entry(training)
        if key not in self._ops:
            self._ops[key] = self.function(training).torch_op()
        return self._ops[key]

    def module(self):
        """A torch.nn.Module running this program (see tenet.importer.module). For a
        program from from_torch it shares the original module's parameters and buffers;
        for a loaded one it owns them (the first module made is the one ``save`` reads)."""
        from .module import TenetModule
        made = TenetModule(self, self._original)
        if self._original is None:
            self._original = made
        return made

    def save(self, directory):
        """Writes ``model.tn`` and ``weights.safetensors`` (the parameters and buffers,
        with the manifest in its metadata) into ``directory``."""
        from safetensors.numpy import save_file
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "model.tn"), "w") as out:
            out.write(self.source)
        state = self._current_weights()
        arrays = {key: value.detach().cpu().contiguous().numpy() for key, value in state.items()}
        save_file(arrays, os.path.join(directory, "weights.safetensors"),
                  metadata={MANIFEST_KEY: json.dumps(self.manifest)})

    def _current_weights(self):
        """The weights, with the module's current parameters and buffers."""
        weights = dict(self.weights)
        if self._original is not None:
            weights.update(self._original.named_parameters())
            weights.update(self._original.named_buffers())
        return weights


def load(directory):
    """The Program that ``Program.save(directory)`` wrote."""
    import torch
    from safetensors import safe_open
    path = os.path.join(directory, "weights.safetensors")
    with open(os.path.join(directory, "model.tn")) as source_file:
        source = source_file.read()
    with safe_open(path, framework="numpy") as weights_file:
        metadata = weights_file.metadata() or {}
        if MANIFEST_KEY not in metadata:
            raise ValueError(f"{path}: no '{MANIFEST_KEY}' metadata: not written by "
                             f"tenet Program.save")
        weights = {key: torch.from_numpy(weights_file.get_tensor(key).copy())
                   for key in weights_file.keys()}
    return Program(source, json.loads(metadata[MANIFEST_KEY]), weights)
