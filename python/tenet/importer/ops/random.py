"""Dropout: the random mask is an input of the program, drawn by the module before each
call as PyTorch draws it (Bernoulli(1 - p) scaled by 1 / (1 - p), in the input's dtype),
so the program is deterministic and its gradient treats the mask as a constant."""

from . import op


@op("aten.native_dropout.default")
def native_dropout(t, x, p, train):
    if not train or p == 0:
        return (x, None)
    if p == 1:  # PyTorch multiplies by 0 (the mask's 1 / (1 - p) would be NaN)
        return (t.elementwise(lambda v: f"{v} * 0", [x]), None)
    mask = t.add_input(f"{t.default_name()}_mask", x.shape, "float", "dropout", extra=p)
    out = t.elementwise(lambda v, m: f"{v} * {m}", [x, mask])
    return (out, None)
