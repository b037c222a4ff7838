/// \file
/// NumPy arrays <-> tenet::Tensor for the Python module.
///
/// Expects: C-contiguous, aligned arrays in native byte order (the Python
/// layer makes them so).
/// Guarantees: raw_input describes an array's buffer in place, without a copy
/// (a dtype Tenet does not have, a byte-swapped, non-contiguous or misaligned
/// array is a BindError naming the input); to_numpy
/// returns an array that shares the Tensor's memory and keeps it alive.
#pragma once

#include <pybind11/numpy.h>

#include <string>

#include "python/src/kernel.h"
#include "support/tensor.h"

namespace tenet::python {

/// Valid while the array lives.
RawInput raw_input(const pybind11::array& array, const std::string& name);
pybind11::array to_numpy(const Tensor& tensor);

}  // namespace tenet::python
