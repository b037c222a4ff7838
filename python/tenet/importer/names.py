"""Legal, unique Tenet names for tensors, the index names statements use, and user text
made safe for a comment (module paths, class names, source lines: any of them may hold a
newline that would otherwise end the comment and start a statement)."""

import re

from .. import _tenet

# Index names: a statement's own indices (left side) and its reduced ones.
OWN_INDICES = "ijklmn"
REDUCED_INDICES = "rstuvw"

# The language's reserved words and builtins, from the compiler's one table (ir/builtins.h).
_VOCABULARY = _tenet.vocabulary()
_TYPES = frozenset(_VOCABULARY["types"])
_BUILTINS = frozenset(b["name"] for b in _VOCABULARY["builtins"])
_KEYWORDS = frozenset(_VOCABULARY["keywords"])


def own_indices(rank):
    return [OWN_INDICES[k] if k < len(OWN_INDICES) else f"i{k}" for k in range(rank)]


def reduced_indices(count, skip=0):
    return [REDUCED_INDICES[k] if k < len(REDUCED_INDICES) else f"r{k}"
            for k in range(skip, skip + count)]


class Namer:
    """Hands out tensor names: the wanted name made legal (letters, digits, '_'; no
    keyword, type, builtin, index or size name) and unique (``_2``, ``_3``, ...)."""

    def __init__(self, reserved=()):
        self._taken = set(reserved) | _TYPES | _BUILTINS | _KEYWORDS

    def is_free(self, name):
        return name not in self._taken

    def reserve(self, name):
        self._taken.add(name)

    def __call__(self, wanted):
        name = re.sub(r"[^A-Za-z0-9_]", "_", wanted).strip("_") or "t"
        if name[0].isdigit():
            name = "t" + name
        if len(name) == 1:  # single letters are index and size names
            name += "_t"
        base, k = name, 2
        while name in self._taken:
            name = f"{base}_{k}"
            k += 1
        self._taken.add(name)
        return name


def comment_text(text):
    """``text`` (user-controlled: a module path, a class name, a Python source line, a
    file name) made safe inside a ``#`` comment of a program or a ``//`` one of C++:
    every character that is not printable (newline, carriage return, other controls,
    line and paragraph separators, format characters) is written as its Python escape
    (``\\n``, ``\\x1b``, ``\\u2028``), so that the text stays on the comment's line; a
    trailing backslash (which would splice the next line into a C++ comment) is
    escaped too."""
    text = str(text)
    out = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)
    return out[:-1] + "\\x5c" if out.endswith("\\") else out


def is_identifier(name):
    """A C identifier (letters, digits and '_' in ASCII, not starting with a digit)."""
    return isinstance(name, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) is not None
