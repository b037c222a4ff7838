"""``Program.save`` and ``tenet.load``: a saved program's two files, written as a pair
that a crash cannot split, and checked when read back (docs/security.md, "Saved
programs").

``weights.safetensors`` is the save's record: besides the parameters and buffers its
metadata holds the manifest (``tenet.import``), the program's text (``tenet.source``)
and the SHA-256 of the ``model.tn`` the save replaced (``tenet.replaces``). A save
writes both files to temporaries in the folder, syncs them, renames the weights over
the old ones (the moment the new save counts) and then ``model.tn``. A crash before
the first rename leaves the previous save; one between the renames leaves the new
weights beside the old ``model.tn``, which ``load`` recognises by its hash and
replaces by the text the weights carry; after the second, the new save.

``load`` validates every manifest field, and matches the weights to the program's
declarations by name, kind, dtype and shape (a ``model.tn`` edited by hand is loaded
if it still agrees), each error naming the file, the field or tensor, and what was
expected and found.
"""

import contextlib
import hashlib
import json
import os
import stat
import tempfile

from .. import function as tenet_function
from .manifest import check_manifest, check_program

MANIFEST_KEY = "tenet.import"
SOURCE_KEY = "tenet.source"
REPLACES_KEY = "tenet.replaces"
MODEL_FILE = "model.tn"
WEIGHTS_FILE = "weights.safetensors"


def save(program, directory):
    """Program.save: ``model.tn`` and ``weights.safetensors`` in ``directory``."""
    from safetensors.numpy import save_file
    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    model, weights = (os.path.join(directory, f) for f in (MODEL_FILE, WEIGHTS_FILE))
    for path in (model, weights):
        _refuse_special(path)
    tied = program.manifest.get("tied", {})
    state = program._current_weights()
    arrays = {key: value.detach().cpu().contiguous().numpy()
              for key, value in state.items() if key not in tied}  # a tied tensor once
    metadata = {MANIFEST_KEY: json.dumps(program.manifest), SOURCE_KEY: program.source}
    previous = _read_text(model)
    if previous is not None:
        metadata[REPLACES_KEY] = _sha256(previous)
    temporaries = []
    try:
        weights_tmp = _temporary(directory, WEIGHTS_FILE, temporaries)
        save_file(arrays, weights_tmp, metadata=metadata)
        _sync(weights_tmp)
        model_tmp = _temporary(directory, MODEL_FILE, temporaries)
        with open(model_tmp, "w", encoding="utf-8") as out:
            out.write(program.source)
            out.flush()
            os.fsync(out.fileno())
        os.replace(weights_tmp, weights)  # from here on, load reads the new save
        os.replace(model_tmp, model)
        temporaries.clear()
        _sync(directory)
    finally:
        for path in temporaries:
            with contextlib.suppress(OSError):
                os.unlink(path)


def load(directory):
    """tenet.load: the Program that ``Program.save(directory)`` wrote."""
    from .program import Program
    directory = os.fspath(directory)
    model, path = (os.path.join(directory, f) for f in (MODEL_FILE, WEIGHTS_FILE))
    metadata, weights = _read_weights(path)
    if MANIFEST_KEY not in metadata:
        raise ValueError(f"{path}: no '{MANIFEST_KEY}' metadata: not written by "
                         f"tenet Program.save")
    try:
        manifest = json.loads(metadata[MANIFEST_KEY])
    except ValueError as error:
        raise ValueError(f"{path}: metadata '{MANIFEST_KEY}' is not JSON ({error})") from None
    check_manifest(manifest, path, MANIFEST_KEY, weights)
    source, filename = _source(model, metadata, path)
    checked = tenet_function.load(source, filename)
    check_program(manifest, weights, checked, source, filename, path)
    return Program(source, manifest, weights)


def _source(model, metadata, weights_path):
    """The program's text and the name its diagnostics give it: ``model.tn``, unless a
    save was interrupted between its renames (``model.tn`` is then the one the save
    replaced, or missing where there was none): the text the weights carry."""
    text = _read_text(model)
    saved = metadata.get(SOURCE_KEY)
    if saved is None or text == saved:
        if text is None:
            raise FileNotFoundError(f"{model}: no such file (the program of {weights_path})")
        return text, model
    replaced = metadata.get(REPLACES_KEY)
    if (text is None and replaced is None) or (text is not None and _sha256(text) == replaced):
        return saved, f"{model} (as saved in {weights_path}: the save was interrupted)"
    if text is None:
        raise FileNotFoundError(f"{model}: no such file (the program of {weights_path})")
    return text, model  # edited by hand: checked against the weights


def _read_weights(path):
    import torch
    from safetensors import safe_open
    if not _is_regular(path):
        raise FileNotFoundError(f"{path}: no such file (the weights of a Program.save)")
    try:
        with safe_open(path, framework="numpy") as weights_file:
            metadata = weights_file.metadata() or {}
            weights = {key: torch.from_numpy(weights_file.get_tensor(key).copy())
                       for key in weights_file.keys()}
    except OSError:
        raise
    except Exception as error:  # noqa: BLE001 (safetensors' errors: a malformed file)
        raise ValueError(f"{path}: not a readable safetensors file ({error})") from None
    return metadata, weights


def _is_regular(path):
    """A regular file (a link to one followed); raises for anything else there (a FIFO
    or device would be read without end)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(mode):
        raise ValueError(f"{path} is not a regular file ({_kind(mode)}): tenet.load reads "
                         f"only regular files")
    return True


def _read_text(path):
    if not _is_regular(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text ({error})") from None


def _sha256(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _refuse_special(path):
    """Save replaces regular files only: a link, FIFO, device or folder is refused."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise FileExistsError(f"{path} is {_kind(mode)}, not a regular file: Program.save "
                              f"replaces only regular files (remove it, or save to another "
                              f"folder)")


def _kind(mode):
    return ("a symbolic link" if stat.S_ISLNK(mode) else "a folder" if stat.S_ISDIR(mode)
            else "a FIFO" if stat.S_ISFIFO(mode) else "a device or special file")


def _temporary(directory, name, made):
    handle, path = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".partial")
    os.close(handle)
    made.append(path)
    return path


def _sync(path):
    """Flushes a file's data (or a folder's entries: the renames) to the disk."""
    flags = os.O_RDONLY | (os.O_DIRECTORY if os.path.isdir(path) else 0)
    try:
        handle = os.open(path, flags)
    except OSError:
        return  # a folder that cannot be opened (some platforms): nothing to sync
    try:
        os.fsync(handle)
    except OSError:
        if not os.path.isdir(path):
            raise
        # folders on some file systems cannot be synced
    finally:
        os.close(handle)
