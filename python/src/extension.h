/// \file
/// PyTorch extensions from Python: `_tenet.emit_torch_project(...)` writes the
/// project `tenet emit --target torch` writes (extension/torch_project.h);
/// python/tenet/torch_extension.py builds and loads it. Also the libraries
/// and cache folder the JIT uses, so that the extension's kernels are built
/// the same way.
#pragma once

#include <pybind11/pybind11.h>

namespace tenet::python {

void bind_extension(pybind11::module_& m);

}  // namespace tenet::python
