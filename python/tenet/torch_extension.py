"""Tenet functions as native PyTorch C++ extensions (``tenet emit --target torch``).

``tenet.emit_torch_extension(source, directory, namespace=...)`` writes the
project: the generated kernels, a C++ file registering each function as the
operator ``<namespace>::<name>`` (CPU and Meta kernels, autograd through a
``torch::autograd::Function`` calling the derived backward
``<namespace>::<name>_backward``), a header for C++ programs, a CMakeLists.txt
(``find_package(Torch)``) and a README. Nothing in it needs Tenet or Python:
a LibTorch C++ program links it and calls the operators.

``tenet.torch_extension(source, entry, namespace=...)`` also builds it, with
``torch.utils.cpp_extension.load`` (the kernels with the flags and GEMM
libraries Tenet's JIT uses), loads it into this process and returns the
operator (``torch.ops.<namespace>.<name>``). The difference from
``tenet.torch_op`` (tenet.library): the operators are C++ through and through,
the same code a C++ program or another Python process loads with
``torch.ops.load_library``, with no Tenet at run time.
"""

import hashlib
import os
import subprocess

from . import _tenet
from .function import _flag, _text, checked_sizes

_LOADED = {}  # namespace -> (key, operators' namespace object)


def _source_and_path(source, filename):
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    return _text(source, "source"), _text(filename, "filename")


def _options(namespace, entry, name, sizes, openmp, index_checks):
    functions = [] if entry is None else [_text(entry, "entry (a function's name)")]
    return {"namespace": _text(namespace, "namespace", optional=True) or "",
            "functions": functions, "name": _text(name, "name", optional=True) or "",
            "sizes": checked_sizes(sizes), "openmp": _flag(openmp, "openmp"),
            "index_checks": _flag(index_checks, "index_checks")}


def emit_torch_extension(source, directory, entry=None, *, namespace, name=None, sizes=None,
                         filename="<string>", openmp=True, index_checks=True, overwrite=False):
    """Writes the PyTorch extension of ``source`` (text, or a path) into ``directory``:
    every def as an operator, or ``entry`` alone (named ``name``, by default as the def).
    ``sizes`` fixes size parameters no input's shape determines. Returns a dict: the
    ``namespace``, the ``operators`` (qualified names), the ``sources`` (.cpp files, the
    operator source first) and ``uses_gemm`` (the kernels call tenet::gemm)."""
    text, path = _source_and_path(source, filename)
    options = _options(namespace, entry, name, sizes, openmp, index_checks)
    return _tenet.emit_torch_project(path, text, os.fspath(directory), overwrite=overwrite,
                                     **options)


def _check_trusted(directory):
    """The folder whose sources are compiled and loaded is yours and writable by nobody
    else (docs/security.md): otherwise another user could change the code this process
    runs."""
    info = os.stat(directory)
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise _tenet.BindError(
            f"refusing to build a PyTorch extension in '{directory}': it belongs to another "
            f"user or others can write to it, so another user could change the code this "
            f"process would load; choose a folder only you can write (directory=)")


def _kernel_flags(uses_gemm, openmp):
    """The kernels' compiler and linker flags, as Tenet's JIT builds them (jit/jit.h)."""
    cflags = ["-std=c++17", "-fPIC", "-O3", "-march=native", "-fwrapv", "-ffp-contract=off",
              "-fno-math-errno", "-fno-tree-loop-if-convert"]
    ldflags = []
    if openmp:
        cflags.append("-fopenmp")
        ldflags.append("-fopenmp")
    if uses_gemm:
        for library, define in ((_tenet.dnnl_library(), "-DTENET_GEMM_DNNL"),
                                (_tenet.blas_library(), "-DTENET_GEMM_CBLAS")):
            if library != "none":
                cflags.append(define)
                ldflags += [library, f"-Wl,-rpath,{os.path.dirname(library)}"]
    return cflags, ldflags


def _compile_kernels(directory, sources, build, cflags, verbose):
    """The generated kernels as object files, compiled apart from the operator source:
    PyTorch's include folder has a oneDNN header of its own, which must not shadow the
    system's that the kernels are linked with. Each object is named by a hash of its
    source and flags, so that a changed kernel makes a new object (and a new link)."""
    compiler = os.environ.get("CXX", "c++")
    objects = []
    for source in sources:
        path = os.path.join(directory, source)
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read() + repr(cflags).encode()).hexdigest()[:16]
        obj = os.path.join(build, f"{os.path.splitext(source)[0]}-{digest}.o")
        if not os.path.exists(obj):
            command = [compiler, *cflags, "-I", directory, "-c", path, "-o", obj + ".part"]
            if verbose:
                print(" ".join(command))
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"compiling the generated kernels {path} failed:\n"
                                   f"{' '.join(command)}\n{done.stderr[-4000:]}")
            os.replace(obj + ".part", obj)
        objects.append(obj)
    return objects


def torch_extension(source, entry=None, *, namespace, name=None, sizes=None, directory=None,
                    filename="<string>", openmp=True, index_checks=True, verbose=False):
    """Writes, builds and loads the PyTorch extension of ``source`` (see
    emit_torch_extension); returns ``torch.ops.<namespace>.<name>`` when one function is
    chosen (``entry``), else ``torch.ops.<namespace>``. ``directory`` defaults to a folder
    of Tenet's cache named by a hash of the program and options; the build is reused
    while the sources stay the same. A namespace holds one extension per process: loading
    a different program under a namespace already loaded is a ValueError."""
    import torch
    from torch.utils import cpp_extension

    text, path = _source_and_path(source, filename)
    options = _options(namespace, entry, name, sizes, openmp, index_checks)
    ns = options["namespace"]
    if not ns:
        raise ValueError("namespace: a PyTorch extension needs a namespace for its operators "
                         "(torch.ops.<namespace>)")
    key = hashlib.sha256(repr((text, path, sorted(options.items()))).encode()).hexdigest()[:16]
    loaded = _LOADED.get(ns)
    if loaded is not None and loaded[0] != key:
        raise ValueError(f"namespace: an extension of another program is already loaded as "
                         f"torch.ops.{ns} in this process; choose another namespace")
    if loaded is None:
        if directory is None:
            directory = os.path.join(_tenet.default_cache_dir(), "torch-extensions",
                                     f"{ns}-{key}")
        directory = os.fspath(directory)
        os.makedirs(directory, mode=0o700, exist_ok=True)
        _check_trusted(directory)
        project = _tenet.emit_torch_project(path, text, directory, overwrite=True, **options)
        build = os.path.join(directory, "build")
        os.makedirs(build, mode=0o700, exist_ok=True)
        cflags, ldflags = _kernel_flags(project["uses_gemm"], options["openmp"])
        objects = _compile_kernels(directory, project["sources"][1:], build, cflags, verbose)
        cpp_extension.load(name=ns, sources=[os.path.join(directory, project["sources"][0])],
                           extra_include_paths=[directory], extra_cflags=["-O2"],
                           extra_ldflags=objects + ldflags, build_directory=build,
                           is_python_module=False, verbose=verbose)
        loaded = _LOADED[ns] = (key, getattr(torch.ops, ns))
    operators = loaded[1]
    if options["functions"]:
        return getattr(operators, options["name"] or options["functions"][0])
    return operators
