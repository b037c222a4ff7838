"""The importer's one error class: what could not be imported, and where in the user's code."""

import os
import traceback


class TorchImportError(ValueError):
    """A PyTorch module that ``tenet.from_torch`` cannot translate: an op Tenet does not
    support, a dtype it does not handle, or a graph ``torch.export`` cannot capture
    (data-dependent shapes or control flow).

    ``str(error)`` is ``FILE:LINE: error: WHAT`` (the user's Python source line, when
    known), followed by the module path (and class) and the line of code. The parts are
    attributes: ``op`` (the ATen op, or None), ``module_path`` ('' for the top module),
    ``module_type`` (its class name, or ''), ``location`` ('file.py:12', or None) and
    ``code`` (the source line's text, or None).
    """

    def __init__(self, what, *, op=None, module_path="", module_type="", location=None,
                 code=None):
        self.what = what
        self.op = op
        self.module_path = module_path
        self.module_type = module_type
        self.location = location
        self.code = code
        text = f"{location}: error: {what}" if location else f"error: {what}"
        text += f"\n  in module '{module_path}'" if module_path else "\n  in the top module"
        if module_type:
            text += f" ({module_type})"
        if code:
            text += f"\n    {code}"
        super().__init__(text)


def node_origin(node):
    """(module path, 'file.py:LINE', code line) of an FX node, from the metadata that
    torch.export records (``nn_module_stack`` and ``stack_trace``); parts not known are ''
    or None."""
    stack = node.meta.get("nn_module_stack") or {}
    path = ""
    kind = ""
    if stack:
        path, cls = list(stack.values())[-1]
        kind = getattr(cls, "__name__", str(cls)).rsplit(".", 1)[-1]
        path = _clean_path(path)
    location, code = _last_frame(node.meta.get("stack_trace"))
    return path, kind, location, code


def _clean_path(path):
    # export spells indexed children as L['self'].layers[0] in some versions; keep dots
    for prefix in ("L['self'].", "L__self__."):
        if path.startswith(prefix):
            path = path[len(prefix):]
    return path.replace("[", ".").replace("]", "")


def _last_frame(stack_trace):
    """The last frame of an FX node's recorded stack trace: ('file.py:12', 'code')."""
    if not stack_trace:
        return None, None
    # split at "\n" only: a file name or code line may hold other line separators
    lines = stack_trace.strip().split("\n")
    torch_dir = _package_dir("torch")
    for k in range(len(lines) - 1, -1, -1):
        line = lines[k].strip()
        if line.startswith('File "'):
            file = line[len('File "'):].split('"', 1)[0]
            if os.path.abspath(file).startswith(torch_dir) or "/torch/" in file:
                continue  # PyTorch's own code: the user's line is further up
            number = line.split(", line ", 1)[1].split(",", 1)[0] if ", line " in line else "?"
            code = lines[k + 1].strip() if k + 1 < len(lines) else None
            return f"{os.path.basename(file)}:{number}", code
    return None, None


def user_frame(error):
    """The deepest frame of an exception's traceback in the user's code (neither torch's
    nor tenet's): ('file.py:12', 'code'), or (None, None)."""
    torch_dir = _package_dir("torch")
    tenet_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = (None, None)
    for frame in traceback.extract_tb(error.__traceback__):
        path = os.path.abspath(frame.filename)
        if path.startswith((torch_dir, tenet_dir)) or frame.filename.startswith("<"):
            continue
        found = (f"{os.path.basename(frame.filename)}:{frame.lineno}", frame.line)
    return found


def _package_dir(name):
    module = __import__(name)
    return os.path.dirname(os.path.abspath(module.__file__))
