"""The op table: one translator per Core ATen op, registered by the op's name
('aten.addmm.default'). A translator takes the ``Translator`` and the node's arguments
(graph values as ``values.Tensor`` / ``values.Size``, the rest as exported) and returns
the node's value: a Tensor, or a tuple of them for ops with several outputs (None for an
output that is not translated)."""

REGISTRY = {}


def op(*names):
    """Registers the decorated translator for the ops ``names``."""
    def register(translate):
        for name in names:
            REGISTRY[name] = translate
        return translate
    return register


from . import (attention, conv, elementwise, index, linalg, norm, random, reduce,  # noqa: E402,F401,I001
               running, shape, sort)
