/// \file
/// NumPy .npy files <-> Tensor, for `tenet run --inputs DIR` (DIR/<input>.npy)
/// and for writing outputs.
///
/// Reads format versions 1.0, 2.0 and 3.0 with little-endian, C-order data of
/// dtype <f4 <f8 <i2 <i4 <i8 |i1 |u1 |b1 (bool). Anything else (big-endian,
/// Fortran order, other dtypes, a truncated or padded file, a bad magic) is a
/// BindError that names the file and says what is wrong. Writes version 1.0
/// (2.0 only when the header would not fit), readable by numpy.load.
#pragma once

#include <string>
#include <string_view>

#include "support/tensor.h"

namespace tenet {

Tensor read_npy(const std::string& path);
void write_npy(const std::string& path, const Tensor& t);

/// The same, in memory; `name` stands for the file in error messages.
Tensor parse_npy(std::string_view bytes, const std::string& name);
std::string to_npy(const Tensor& t);

}  // namespace tenet
