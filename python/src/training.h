/// \file
/// Training from Python: `_tenet.training_options()` (the trainer's options
/// table, train/options.h) and `_tenet.train(...)`, which runs the same
/// training loop as `tenet train` (train/loop.h) with keyword options checked
/// against the same table. The thin Python layer is python/tenet/training.py.
/// Bad options raise BindError (a ValueError) naming the option and its
/// range; the loop runs without the GIL, taking it to report lines and at
/// each step to check for Ctrl-C.
#pragma once

#include <pybind11/pybind11.h>

namespace tenet::python {

void bind_training(pybind11::module_& m);

}  // namespace tenet::python
